import AsyncHTTPClient
import EarshotCore
import Foundation
import NIOCore
/// Sends events to a hub from a queue: `submit` returns at once and never blocks the caller
/// (nor, through it, audio); a sender retries each event, with back-off, until the hub has
/// stored it. Every event carries a key of its own, so a post the hub stored but whose answer
/// was lost is not stored twice when it is retried. With a spool file the queue outlives the
/// process: what the hub has not stored is sent when the next run starts.
public final class HubPoster: @unchecked Sendable {
    public let address: HubAddress
    public let source: String?
    /// Where unsent events wait, one JSON object per line; nil keeps them in memory only.
    public let spool: String?
    /// The most events kept waiting: beyond it the oldest are dropped (a hub away for weeks).
    public static let maximumQueued = 1000
    private let lock = NSLock()
    private var queue: [EventSubmission] = []
    private var sending = false
    private var warned = false
    private let client = HTTPClient.failingFast()
    private var closed = false
    /// Called (from the sender) with a sentence when the hub cannot be reached or refuses.
    public var warn: @Sendable (String) -> Void = { _ in }

    public init(address: HubAddress, source: String? = nil, spool: String? = nil) {
        self.address = address
        self.source = source
        self.spool = spool
        if let spool, let text = try? String(contentsOfFile: spool, encoding: .utf8) {
            queue = text.split(separator: "\n").compactMap { try? EventSubmission(json: Data($0.utf8)) }.suffix(Self.maximumQueued)
        }
        if !queue.isEmpty {
            sending = true
            Task.detached { await self.drain() }
        }
    }

    deinit {
        if !lock.withLock({ closed }) { try? client.syncShutdown() }
    }

    /// Queues an event; a sender starts if none is running. Returns the event's key.
    @discardableResult
    public func submit(kind: EventKind, label: String, time: Date, confidence: Double?) -> String {
        let event = EventSubmission(kind: kind, label: label, time: time.timeIntervalSince1970, confidence: confidence,
                                    source: source, key: UUID().uuidString)
        let start = lock.withLock {
            queue.append(event)
            if queue.count > Self.maximumQueued { queue.removeFirst(queue.count - Self.maximumQueued) }
            saveSpool()
            defer { sending = true }
            return !sending
        }
        if start { Task.detached { await self.drain() } }
        return event.key!
    }

    /// Rewrites the spool from the queue (under the lock). Events are rare: a whole rewrite,
    /// atomic, is simpler than a journal and never leaves half a line.
    private func saveSpool() {
        guard let spool else { return }
        if queue.isEmpty {
            unlink(spool)
        } else {
            let lines = queue.map { String(decoding: $0.jsonData, as: UTF8.self) + "\n" }.joined()
            do { try AtomicFile.write(Data(lines.utf8), to: spool) } catch { warn("cannot keep unsent events in \(spool): \(error)") }
        }
    }

    /// Events not yet stored by the hub.
    public var pending: Int {
        lock.withLock { queue.count }
    }

    /// Waits up to `seconds` for the queue to empty, then stops sending; returns how many
    /// events were never stored. Call once, at the end.
    public func close(waitingUpTo seconds: Double) -> Int {
        let deadline = Date().addingTimeInterval(seconds)
        while pending > 0, Date() < deadline { usleep(20_000) }
        lock.withLock { closed = true }
        while lock.withLock({ sending }) { usleep(5_000) }
        try? client.syncShutdown()
        return pending
    }

    private func drain() async {
        var delay = 0.25
        while true {
            let next: EventSubmission? = lock.withLock {
                if queue.isEmpty || closed { sending = false }
                return closed ? nil : queue.first
            }
            guard let event = next else { return }
            switch await send(event) {
            case .stored, .refused:
                lock.withLock {
                    _ = queue.removeFirst()
                    saveSpool()
                }
                delay = 0.25
            case .retry:
                try? await Task.sleep(for: .seconds(delay))
                delay = min(delay * 2, 5)
            }
        }
    }

    private enum Outcome { case stored, refused, retry }

    private func send(_ event: EventSubmission) async -> Outcome {
        var request = HTTPClientRequest(url: address.endpoint("/api/events"))
        request.method = .POST
        request.headers.add(name: "Authorization", value: "Bearer \(address.token)")
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(bytes: event.jsonData))
        do {
            let response = try await client.execute(request, timeout: .seconds(10))
            let body = try await response.body.collect(upTo: 64 * 1024)
            switch response.status.code {
            case 200, 201:
                return .stored
            case 401:
                warnOnce("the hub at \(address.url.absoluteString) refused the token")
                return .retry  // keep the event: a token can be fixed on the hub while we wait
            case 400..<500:
                warn("the hub refused an event: \(String(buffer: body))")
                return .refused
            default:
                warnOnce("the hub answered \(response.status.code); retrying")
                return .retry
            }
        } catch {
            warnOnce("cannot reach the hub at \(address.url.absoluteString); events are kept and retried")
            return .retry
        }
    }

    private func warnOnce(_ message: String) {
        let first = lock.withLock {
            defer { warned = true }
            return !warned
        }
        if first { warn(message) }
    }
}
