#ifndef EARSHOT_ALLOCATION_COUNTER_H
#define EARSHOT_ALLOCATION_COUNTER_H

/// Counts heap allocations (malloc, calloc, realloc, aligned forms) made by the calling thread
/// while its counting is on, by interposing the allocator. Only on glibc; elsewhere
/// `allocation_counter_supported` is 0.
int allocation_counter_supported(void);
void allocation_counter_start(void);
/// Stops counting and returns the allocations made since `allocation_counter_start`.
long allocation_counter_stop(void);

#endif
