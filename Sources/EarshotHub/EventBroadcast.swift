import EarshotHubClient
/// Hands every newly stored event to whoever is streaming: the SSE and ntfy subscribers.
public actor EventBroadcast {
    private var subscribers: [Int: AsyncStream<StoredEvent>.Continuation] = [:]
    private var next = 0

    public init() {}

    /// A stream of events stored from now on; it ends when the subscriber goes away.
    public func subscribe() -> AsyncStream<StoredEvent> {
        let (stream, continuation) = AsyncStream<StoredEvent>.makeStream(bufferingPolicy: .bufferingNewest(10_000))
        let id = next
        next += 1
        subscribers[id] = continuation
        continuation.onTermination = { _ in Task { await self.remove(id) } }
        return stream
    }

    public func publish(_ event: StoredEvent) {
        for continuation in subscribers.values { continuation.yield(event) }
    }

    private func remove(_ id: Int) { subscribers[id] = nil }
}
