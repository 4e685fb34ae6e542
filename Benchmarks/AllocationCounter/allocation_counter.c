#include "allocation_counter.h"

#if defined(__linux__)
#include <features.h>  // defines __GLIBC__
#endif

#if defined(__GLIBC__)
#include <stddef.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);

// Per thread, so tests running in parallel on other threads do not count here. Initial-exec
// TLS needs no allocation of its own, which matters inside malloc.
#define THREAD_LOCAL _Thread_local __attribute__((tls_model("initial-exec")))
static THREAD_LOCAL int counting = 0;
static THREAD_LOCAL long allocations = 0;

static inline void count(void) {
    if (counting) allocations += 1;
}

// The executable's definitions take precedence over libc's for the whole process.
void *malloc(size_t size) { count(); return __libc_malloc(size); }
void *calloc(size_t n, size_t size) { count(); return __libc_calloc(n, size); }
void *realloc(void *pointer, size_t size) { count(); return __libc_realloc(pointer, size); }
void *memalign(size_t alignment, size_t size) { count(); return __libc_memalign(alignment, size); }
void *aligned_alloc(size_t alignment, size_t size) { count(); return __libc_memalign(alignment, size); }
int posix_memalign(void **out, size_t alignment, size_t size) {
    count();
    void *pointer = __libc_memalign(alignment, size);
    if (!pointer) return 12;  // ENOMEM
    *out = pointer;
    return 0;
}

int allocation_counter_supported(void) { return 1; }
void allocation_counter_start(void) { allocations = 0; counting = 1; }
long allocation_counter_stop(void) { counting = 0; return allocations; }
#else
int allocation_counter_supported(void) { return 0; }
void allocation_counter_start(void) {}
long allocation_counter_stop(void) { return -1; }
#endif
