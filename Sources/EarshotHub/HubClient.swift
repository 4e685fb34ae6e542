import AsyncHTTPClient
import EarshotCore
import Foundation
import NIOCore
import NIOHTTP1

/// Where a producer sends its events: a hub's address and a token.
public struct HubAddress: Sendable {
    public var url: URL
    public var token: String

    /// Checks both before anything runs: an http(s) URL with a host, and a token.
    public init(url text: String, token: String) throws {
        guard let url = URL(string: text.hasSuffix("/") ? String(text.dropLast()) : text), let scheme = url.scheme,
              ["http", "https"].contains(scheme), url.host != nil else {
            throw EarshotError.invalidArgument("--hub must be an http:// or https:// URL, not '\(text)'")
        }
        guard !token.isEmpty else { throw EarshotError.invalidArgument("--hub needs --token (earshot token create on the hub)") }
        self.url = url
        self.token = token
    }

    func endpoint(_ path: String) -> String { url.absoluteString + path }
}

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

/// Follows a hub's event stream for as long as it runs: reconnects after any loss with the
/// last id it saw, so nothing is missed, and drops anything at or below that id, so nothing is
/// shown twice.
public struct HubFollower: Sendable {
    public let address: HubAddress
    /// Where to start: an id (0 for everything kept), or nil for what arrives from now on.
    public var since: Int64?

    public init(address: HubAddress, since: Int64?) {
        self.address = address
        self.since = since
    }

    /// Calls `received` with each event's id and JSON, and `status` with a sentence when the
    /// connection is lost or back, until the task is cancelled.
    public func follow(received: @Sendable (Int64, String) -> Void, status: @Sendable (String) -> Void) async throws {
        let client = HTTPClient.failingFast()
        defer { _ = client.shutdown() as EventLoopFuture<Void> }
        var last = since
        var delay = 0.2
        var wasConnected = false, saidUnreachable = false
        while !Task.isCancelled {
            var request = HTTPClientRequest(url: address.endpoint("/api/events/stream" + (last == nil ? "?since=latest" : "")))
            request.headers.add(name: "Authorization", value: "Bearer \(address.token)")
            request.headers.add(name: "Accept", value: "text/event-stream")
            if let last { request.headers.add(name: "Last-Event-ID", value: String(last)) }
            do {
                let response = try await client.execute(request, timeout: .hours(24 * 365))
                guard response.status == .ok else {
                    if response.status == .unauthorized { throw EarshotError.invalidArgument("the hub refused the token") }
                    throw EarshotError.deviceFailure("the hub answered \(response.status.code)")
                }
                if saidUnreachable { status("connected to the hub") }
                wasConnected = true
                saidUnreachable = false
                delay = 0.2
                var parser = ServerSentEventParser()
                for try await chunk in response.body {
                    for message in parser.feed(String(buffer: chunk)) {
                        guard let text = message.id, let id = Int64(text) else { continue }
                        if let seen = last, id <= seen { continue }
                        last = id
                        received(id, message.data)
                    }
                }
                if last == nil { last = 0 }
                status("the hub closed the stream; reconnecting")
            } catch let error as EarshotError where error.isBadInput {
                throw error
            } catch {
                if Task.isCancelled { return }
                if wasConnected {
                    status("lost the hub (\(error)); reconnecting")
                    wasConnected = false
                } else if !saidUnreachable {
                    status("cannot reach the hub at \(address.url.absoluteString) (\(error)); retrying")
                }
                saidUnreachable = true
            }
            try await Task.sleep(for: .seconds(delay))
            delay = min(delay * 2, 3)
        }
    }
}

extension HTTPClient {
    /// A client that reports a refused connection at once: the callers here retry on their own
    /// schedule, and a pool that backs off on its own would hold a request for up to a minute
    /// after the hub comes back.
    static func failingFast() -> HTTPClient {
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool.retryConnectionEstablishment = false
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }
}

/// Server-Sent Events, as they arrive in arbitrary chunks.
public struct ServerSentEventParser: Sendable {
    public struct Message: Equatable, Sendable {
        public var id: String?
        public var event: String?
        public var data: String
    }

    private var pending = ""
    private var id: String?
    private var event: String?
    private var data: [String] = []

    public init() {}

    /// The messages completed by `text`.
    public mutating func feed(_ text: String) -> [Message] {
        pending += text
        var messages: [Message] = []
        while let newline = pending.firstIndex(where: { $0 == "\n" || $0 == "\r\n" || $0 == "\r" }) {
            let line = String(pending[..<newline])
            pending = String(pending[pending.index(after: newline)...])
            if line.isEmpty {
                if !data.isEmpty { messages.append(Message(id: id, event: event, data: data.joined(separator: "\n"))) }
                data = []
                event = nil
                continue
            }
            if line.hasPrefix(":") { continue }
            let (field, value): (Substring, Substring)
            if let colon = line.firstIndex(of: ":") {
                field = line[..<colon]
                var rest = line[line.index(after: colon)...]
                if rest.hasPrefix(" ") { rest = rest.dropFirst() }
                value = rest
            } else {
                (field, value) = (Substring(line), "")
            }
            switch field {
            case "id": id = String(value)
            case "event": event = String(value)
            case "data": data.append(String(value))
            default: break
            }
        }
        return messages
    }
}

/// Whether the hub holds sounds quiet right now (snoozed from the dashboard, or in its quiet
/// hours), asked every `interval` seconds; false until the hub has answered.
public final class HubQuietFollower: @unchecked Sendable {
    public let address: HubAddress
    private let lock = NSLock()
    private var quiet = false
    private var task: Task<Void, Never>?

    public init(address: HubAddress, interval: Double = 15) {
        self.address = address
        task = Task.detached { [weak self] in
            let client = HTTPClient.failingFast()
            defer { _ = client.shutdown() as EventLoopFuture<Void> }
            while !Task.isCancelled {
                await self?.ask(client)
                try? await Task.sleep(for: .seconds(interval))
            }
        }
    }

    public var isQuiet: Bool { lock.withLock { quiet } }

    private func ask(_ client: HTTPClient) async {
        var request = HTTPClientRequest(url: address.endpoint("/api/settings"))
        request.headers.add(name: "Authorization", value: "Bearer \(address.token)")
        guard let response = try? await client.execute(request, timeout: .seconds(10)), response.status == .ok,
              let body = try? await response.body.collect(upTo: 16 * 1024),
              let object = (try? JSONSerialization.jsonObject(with: Data(buffer: body))) as? [String: Any],
              let now = object["quietNow"] as? Bool else { return }
        lock.withLock { quiet = now }
    }

    public func close() { task?.cancel() }
}
