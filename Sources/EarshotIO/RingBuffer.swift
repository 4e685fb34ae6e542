import Atomics

/// A lock-free single-producer, single-consumer queue of samples: the only thing shared
/// between a device callback and the thread that does the work.
///
/// One side writes, the other reads, each from exactly one thread. Positions only grow; the
/// writer publishes with a release store and the reader observes with an acquire load, so
/// samples are visible before the position that announces them. Neither side allocates,
/// locks or waits.
public final class RingBuffer: @unchecked Sendable {
    public let capacity: Int
    private let mask: Int
    private let storage: UnsafeMutablePointer<Float>
    private let writePosition = ManagedAtomic<Int>(0)
    private let readPosition = ManagedAtomic<Int>(0)

    /// Capacity is rounded up to a power of two.
    public init(minimumCapacity: Int) {
        precondition(minimumCapacity >= 1)
        var size = 1
        while size < minimumCapacity { size <<= 1 }
        capacity = size
        mask = size - 1
        storage = .allocate(capacity: size)
        storage.initialize(repeating: 0, count: size)
    }

    deinit { storage.deallocate() }

    /// Samples waiting to be read.
    public var availableToRead: Int {
        writePosition.load(ordering: .acquiring) - readPosition.load(ordering: .acquiring)
    }

    /// Room left for the writer.
    public var availableToWrite: Int { capacity - availableToRead }

    /// Producer side: copies as many of `samples` as fit; returns how many.
    @discardableResult
    public func write(_ samples: UnsafeBufferPointer<Float>) -> Int {
        let write = writePosition.load(ordering: .relaxed)
        let read = readPosition.load(ordering: .acquiring)
        let count = min(samples.count, capacity - (write - read))
        guard count > 0, let source = samples.baseAddress else { return 0 }
        let start = write & mask
        let first = min(count, capacity - start)
        (storage + start).update(from: source, count: first)
        if count > first { storage.update(from: source + first, count: count - first) }
        writePosition.store(write + count, ordering: .releasing)
        return count
    }

    /// Consumer side: fills as much of `destination` as there is data for; returns how many.
    @discardableResult
    public func read(into destination: UnsafeMutableBufferPointer<Float>) -> Int {
        let count = peek(into: destination)
        if count > 0 { readPosition.store(readPosition.load(ordering: .relaxed) + count, ordering: .releasing) }
        return count
    }

    /// Consumer side: copies like `read`, starting `offset` samples in, but consumes nothing.
    @discardableResult
    public func peek(into destination: UnsafeMutableBufferPointer<Float>, offset: Int = 0) -> Int {
        let read = readPosition.load(ordering: .relaxed) + offset
        let write = writePosition.load(ordering: .acquiring)
        let count = min(destination.count, write - read)
        guard count > 0, let target = destination.baseAddress else { return 0 }
        let start = read & mask
        let first = min(count, capacity - start)
        target.update(from: storage + start, count: first)
        if count > first { (target + first).update(from: storage, count: count - first) }
        return count
    }

    /// Consumer side: drops up to `count` samples unread; returns how many.
    @discardableResult
    public func discard(_ count: Int) -> Int {
        let read = readPosition.load(ordering: .relaxed)
        let dropped = min(count, writePosition.load(ordering: .acquiring) - read)
        guard dropped > 0 else { return 0 }
        readPosition.store(read + dropped, ordering: .releasing)
        return dropped
    }
}
