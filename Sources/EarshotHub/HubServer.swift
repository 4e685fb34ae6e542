import EarshotCore
import Foundation
import Hummingbird
import HummingbirdWebSocket
import Logging
import NIOCore
import ServiceLifecycle

/// How a hub is set up.
public struct HubConfiguration: Sendable {
    public var host: String
    public var port: Int
    /// The data folder: `hub.sqlite` and `tokens`.
    public var directory: String
    /// The ntfy topic the hub answers to (`/TOPIC/json`, `/TOPIC/sse`).
    public var topic: String
    /// How often an idle stream says it is still there.
    public var heartbeatSeconds: Double
    /// Plays the hearing-test page's tones on this machine; without one the page says why not.
    public var tonePlayer: (any TonePlayer)?

    public init(host: String = "127.0.0.1", port: Int = 8750, directory: String, topic: String = "earshot", heartbeatSeconds: Double = 15,
                tonePlayer: (any TonePlayer)? = nil) {
        self.host = host
        self.port = port
        self.directory = directory
        self.topic = topic
        self.heartbeatSeconds = heartbeatSeconds
        self.tonePlayer = tonePlayer
    }

    public static var defaultDirectory: String { DataDirectory.path }
}

/// The hub: stores events durably, serves them as JSON, Server-Sent Events and ntfy streams,
/// and the dashboard.
public struct Hub: Sendable {
    public let configuration: HubConfiguration
    public let store: EventStore
    public let tokens: TokenStore
    public let sounds: SoundStore
    let broadcast = EventBroadcast()
    let live = LiveRelay()
    let hearingTest: HearingTestDesk

    public init(configuration: HubConfiguration) throws {
        self.configuration = configuration
        store = try EventStore(path: (configuration.directory as NSString).appendingPathComponent("hub.sqlite"))
        sounds = try SoundStore(path: store.path)
        tokens = TokenStore(directory: configuration.directory)
        hearingTest = HearingTestDesk(player: configuration.tonePlayer, resultsPath: Self.resultsPath(directory: configuration.directory))
    }

    /// Hearing tests taken at the hub go where `earshot audiogram` finds them with `--db`.
    public static func resultsPath(directory: String) -> String {
        (directory as NSString).appendingPathComponent("results.sqlite")
    }

    /// Runs until SIGINT or SIGTERM; `ready` is called once the port is bound.
    public func run(ready: @escaping @Sendable (Int) -> Void = { _ in }) async throws {
        let app = Application(
            router: router(),
            server: .http1WebSocketUpgrade(webSocketRouter: webSocketRouter()),
            configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "earshot"),
            onServerRunning: { channel in ready(channel.localAddress?.port ?? 0) },
            logger: .init(label: "earshot.hub", factory: { _ in SwiftLogNoOpLogHandler() }))
        let live = self.live
        let idleFrames = Task { await live.tick() }
        defer { idleFrames.cancel() }
        try await app.runService()
        await live.closeAll()
    }

    /// `/api/live`: a WebSocket of `LiveFrame`s. Every connection receives; a connection that
    /// sends frames (a listening Earshot) feeds all the others.
    func webSocketRouter() -> Router<BasicWebSocketRequestContext> {
        let router = Router(context: BasicWebSocketRequestContext.self)
        let live = self.live
        router.ws("/api/live", shouldUpgrade: { request, _ in
            try self.authorize(request)
            return .upgrade([:])
        }, onUpgrade: { inbound, outbound, _ in
            let id = UUID()
            let frames = await live.join(id)
            let sender = Task {
                for await frame in frames { try await outbound.write(.binary(ByteBuffer(bytes: frame))) }
            }
            defer { sender.cancel() }
            for try await message in inbound.messages(maxSize: LiveFrame.headerBytes + LiveFrame.maximumBands) {
                guard case .binary(let buffer) = message else { continue }
                do {
                    _ = try LiveFrame(bytes: buffer.readableBytesView)
                } catch let error as HubRequestError {
                    try await outbound.close(.unacceptableData, reason: error.message)
                    break
                }
                await live.publish(Array(buffer.readableBytesView), from: id)
            }
            await live.leave(id)
        })
        return router
    }

    func router() -> Router<BasicRequestContext> {
        let router = Router()
        router.get("/api/health") { _, _ in Self.json(#"{"status":"ok"}"#) }
        router.post("/api/events") { request, context in try await self.post(request, context) }
        router.get("/api/events") { request, _ in
            try self.authorize(request)
            let since = try Self.integer(request, "since", default: 0)
            let limit = try Self.integer(request, "limit", default: 1000)
            guard limit >= 1, limit <= 10_000 else { throw HTTPError(.badRequest, message: "'limit' must be 1–10000") }
            let events = try await self.store.events(after: since, limit: Int(limit))
            return Self.json("[" + events.map(\.json).joined(separator: ",") + "]")
        }
        router.get("/api/events/stream") { request, _ in
            try self.authorize(request)
            let since: Int64
            if let value = request.headers[Self.lastEventID] {
                guard let id = Int64(value), id >= 0 else { throw HTTPError(.badRequest, message: "Last-Event-ID must be an event id") }
                since = id
            } else if request.uri.queryParameters["since"] == "latest" {
                since = try await self.store.latestID()
            } else {
                since = try Self.integer(request, "since", default: 0)
            }
            return self.stream(after: since, format: .serverSentEvents)
        }
        router.get("/:topic/json") { request, context in try await self.ntfy(request, context, format: .ntfyJSON) }
        router.get("/:topic/sse") { request, context in try await self.ntfy(request, context, format: .ntfySSE) }
        router.get("/api/sounds") { request, _ in
            try self.authorize(request)
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            return Self.json(String(decoding: try encoder.encode(try self.sounds.summaries()), as: UTF8.self))
        }
        router.post("/api/events/:id/reject") { request, context in
            try self.authorize(request)
            return try await self.reject(context.parameters.get("id") ?? "")
        }
        router.get("/api/settings") { request, _ in
            try self.authorize(request)
            return Self.json(try await self.store.settings().json(now: Date()))
        }
        router.put("/api/settings") { request, _ in
            try self.authorize(request)
            let data = try await Self.smallBody(request), now = Date()
            do {
                return Self.json(try await self.store.updateSettings { try $0.updated(json: data, now: now) }.json(now: now))
            } catch let error as HubRequestError {
                throw HTTPError(.badRequest, message: error.message)
            }
        }
        router.get("/hearing-test") { _, _ in
            Response(status: .ok, headers: [.contentType: "text/html; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(string: HearingTestPage.html)))
        }
        router.get("/api/hearing-test") { request, _ in
            try self.authorize(request)
            return Self.json(await self.hearingTest.status())
        }
        router.post("/api/hearing-test") { request, _ in
            try self.authorize(request)
            let body = try await Self.smallBody(request)
            return try await Self.hearingTestReply { () async throws(HearingTestError) in try await self.hearingTest.start(body) }
        }
        router.post("/api/hearing-test/answer") { request, _ in
            try self.authorize(request)
            let body = try await Self.smallBody(request)
            return try await Self.hearingTestReply { () async throws(HearingTestError) in try await self.hearingTest.answer(body) }
        }
        router.delete("/api/hearing-test") { request, _ in
            try self.authorize(request)
            return Self.json(await self.hearingTest.cancel())
        }
        router.get("/soundcheck") { _, _ in
            Response(status: .ok, headers: [.contentType: "text/html; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(string: SoundCheckPage.html)))
        }
        router.post("/api/soundcheck") { request, _ in
            try self.authorize(request)
            let query = request.uri.queryParameters
            let rate: Double, roomTone: Double
            do {
                (rate, roomTone) = try SoundCheckDesk.parameters(rate: query["rate"].map(String.init), roomTone: query["roomTone"].map(String.init))
            } catch let error as HubRequestError {
                throw HTTPError(.badRequest, message: error.message)
            }
            var request = request
            let limit = SoundCheckDesk.maximumBytes(rate: rate)
            guard let body = try? await request.collectBody(upTo: limit) else {
                throw HTTPError(.contentTooLarge, message: "a take is at most \(Int(SoundCheckDesk.longestSeconds)) s: the body is larger than \(limit) bytes or incomplete")
            }
            let bytes = Array(body.readableBytesView)
            // Seconds of analysis: off the event loop.
            let outcome = await Task.detached { () -> Result<String, HubRequestError> in
                do {
                    return .success(try SoundCheckDesk.check(bytes, rate: rate, roomToneSeconds: roomTone))
                } catch let error as HubRequestError {
                    return .failure(error)
                } catch {
                    return .failure(HubRequestError("the take could not be checked: \(error)"))
                }
            }.value
            switch outcome {
            case .success(let json): return Self.json(json)
            case .failure(let error): throw HTTPError(.badRequest, message: error.message)
            }
        }
        router.get("/api/live") { _, _ -> Response in
            throw HTTPError(.upgradeRequired, message: "/api/live is a WebSocket")
        }
        router.get("/") { _, _ in
            Response(status: .ok, headers: [.contentType: "text/html; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(string: Dashboard.html)))
        }
        return router
    }

    /// Not my doorbell: what was heard with a sound event becomes evidence against that sound.
    private func reject(_ text: String) async throws -> Response {
        guard let id = Int64(text), id > 0 else { throw HTTPError(.badRequest, message: "'\(text)' is not an event id") }
        guard let origin = try await store.origin(of: id) else { throw HTTPError(.notFound, message: "no event \(id)") }
        guard origin.kind == .sound else { throw HTTPError(.conflict, message: "event \(id) is not one of your sounds") }
        guard let key = origin.key, let name = try sounds.rejectHeard(key: key) else {
            throw HTTPError(.conflict, message: "no recording of event \(id) is kept here (only the latest \(SoundStore.heardKept) heard by a watch sharing this data folder)")
        }
        return Self.json(#"{"rejected":\#(id),"sound":"\#(name)"}"#)
    }

    // MARK: Posting

    private func post(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        try authorize(request)
        var request = request
        let body: ByteBuffer
        do {
            body = try await request.collectBody(upTo: EventSubmission.maximumBodyBytes)
        } catch {
            // Too large (or cut off): either way nothing usable arrived.
            throw HTTPError(.badRequest, message: "the body is larger than \(EventSubmission.maximumBodyBytes) bytes or incomplete")
        }
        let submission: EventSubmission
        do {
            submission = try EventSubmission(json: Data(buffer: body))
        } catch {
            throw HTTPError(.badRequest, message: error.message)
        }
        let (event, isNew) = try await store.append(submission)
        if isNew { await broadcast.publish(event) }
        return Response(status: isNew ? .created : .ok, headers: [.contentType: "application/json"],
                        body: .init(byteBuffer: ByteBuffer(string: #"{"id":\#(event.id)}"#)))
    }

    // MARK: Streams

    enum StreamFormat {
        case serverSentEvents, ntfyJSON, ntfySSE
    }

    private func ntfy(_ request: Request, _ context: BasicRequestContext, format: StreamFormat) async throws -> Response {
        guard context.parameters.get("topic") == configuration.topic else { throw HTTPError(.notFound, message: "no such topic") }
        try authorize(request)
        let query = request.uri.queryParameters
        var since: Int64 = .max  // ntfy's default: only what arrives from now on
        if let text = query["since"].map(String.init) {
            if text == "all" {
                since = 0
            } else if let duration = Self.duration(text) {
                since = try await firstID(receivedSince: Date().timeIntervalSince1970 - duration)
            } else if let unix = Double(text), unix > 1_000_000_000 {
                since = try await firstID(receivedSince: unix)
            } else if let id = Int64(text) {
                since = id
            } else {
                throw HTTPError(.badRequest, message: "'since' must be all, a duration (10m), a unix time or an event id")
            }
        }
        if since == .max { since = try await store.latestID() }
        let poll = query["poll"].map { $0 == "1" || $0 == "true" } ?? false
        return stream(after: since, format: format, poll: poll)
    }

    /// The id just before the first event received at or after `time`.
    private func firstID(receivedSince time: Double) async throws -> Int64 {
        let first = try await store.events(receivedSince: time, limit: 1).first
        if let first { return first.id - 1 }
        return try await store.latestID()
    }

    /// Everything after `since` from the store, then whatever arrives, with heartbeats, until
    /// the client goes away or the hub shuts down. Subscribed before the replay, so nothing
    /// that arrives during it is missed, and ids already replayed are skipped.
    private func stream(after since: Int64, format: StreamFormat, poll: Bool = false) -> Response {
        let contentType = format == .ntfyJSON ? "application/x-ndjson; charset=utf-8" : "text/event-stream"
        let topic = configuration.topic, heartbeat = configuration.heartbeatSeconds
        let store = self.store, broadcast = self.broadcast
        return Response(
            status: .ok, headers: [.contentType: contentType, .cacheControl: "no-cache"],
            body: .init { writer in
                let live = await broadcast.subscribe()
                if format != .serverSentEvents && !poll { try await writer.write(ByteBuffer(string: Self.ntfy(open: topic, format: format))) }
                var last = since
                while true {
                    let page = try await store.events(after: last, limit: 500)
                    for event in page { try await writer.write(ByteBuffer(string: Self.render(event, format: format, topic: topic))) }
                    last = page.last?.id ?? last
                    if page.count < 500 { break }
                }
                if poll {
                    try await writer.finish(nil)
                    return
                }
                let replayed = last
                let (items, sink) = AsyncStream<String>.makeStream()
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask {
                        for await event in live where event.id > replayed { sink.yield(Self.render(event, format: format, topic: topic)) }
                        sink.finish()
                    }
                    group.addTask {
                        while true {
                            try await Task.sleep(for: .seconds(heartbeat))
                            sink.yield(Self.keepalive(format: format, topic: topic))
                        }
                    }
                    group.addTask {
                        // A hub shutting down ends its streams, so clients reconnect elsewhere or later.
                        try? await gracefulShutdown()
                        sink.finish()
                    }
                    for await text in items { try await writer.write(ByteBuffer(string: text)) }
                    group.cancelAll()
                }
                try await writer.finish(nil)
            })
    }

    static func render(_ event: StoredEvent, format: StreamFormat, topic: String) -> String {
        switch format {
        case .serverSentEvents: return "id: \(event.id)\ndata: \(event.json)\n\n"
        case .ntfyJSON: return ntfyMessage(event, topic: topic) + "\n"
        case .ntfySSE: return "id: \(event.id)\nevent: message\ndata: \(ntfyMessage(event, topic: topic))\n\n"
        }
    }

    /// An event as an ntfy message: urgent for alerts, default priority for sounds.
    static func ntfyMessage(_ event: StoredEvent, topic: String) -> String {
        let time = EventSubmission.parseISO8601(event.time)?.timeIntervalSince1970 ?? 0
        let title = event.label.replacingOccurrences(of: "_", with: " ").capitalized
        var words = "\(event.label.replacingOccurrences(of: "_", with: " ")) (\(event.kind.rawValue)"
        if let confidence = event.confidence { words += String(format: ", confidence %.2f", confidence) }
        words += ")"
        if let source = event.source { words += " at \(source)" }
        let message: [String: Any] = [
            "id": String(event.id), "time": Int(time), "event": "message", "topic": topic, "title": title, "message": words,
            "priority": event.kind == .alert ? 5 : event.quiet ? 1 : 3, "tags": [event.kind == .alert ? "rotating_light" : "bell"],
        ]
        return String(decoding: try! JSONSerialization.data(withJSONObject: message, options: [.sortedKeys]), as: UTF8.self)
    }

    static func ntfy(open topic: String, format: StreamFormat) -> String {
        let line = #"{"event":"open","id":"open","time":\#(Int(Date().timeIntervalSince1970)),"topic":"\#(topic)"}"#
        return format == .ntfySSE ? "event: open\ndata: \(line)\n\n" : line + "\n"
    }

    static func keepalive(format: StreamFormat, topic: String) -> String {
        let line = #"{"event":"keepalive","id":"keepalive","time":\#(Int(Date().timeIntervalSince1970)),"topic":"\#(topic)"}"#
        switch format {
        case .serverSentEvents: return ": heartbeat\n\n"
        case .ntfyJSON: return line + "\n"
        case .ntfySSE: return "event: keepalive\ndata: \(line)\n\n"
        }
    }

    // MARK: Helpers

    /// A bearer token from `Authorization`, or `?token=` / `?auth=` for clients that cannot set
    /// headers (a browser's EventSource).
    func authorize(_ request: Request) throws {
        let header = request.headers[.authorization].flatMap { value -> String? in
            value.hasPrefix("Bearer ") ? String(value.dropFirst(7)) : nil
        }
        let query = request.uri.queryParameters
        let given = header ?? query["token"].map(String.init) ?? query["auth"].map(String.init)
        guard let given, TokenStore.matches(given, try tokens.all()) else {
            throw HTTPError(.unauthorized, message: "a valid bearer token is needed (earshot token create)")
        }
    }

    static func smallBody(_ request: Request) async throws -> Data {
        var request = request
        guard let body = try? await request.collectBody(upTo: 4096) else { throw HTTPError(.badRequest, message: "the body is larger than 4096 bytes") }
        return Data(buffer: body)
    }

    static func hearingTestReply(_ work: () async throws(HearingTestError) -> String) async throws -> Response {
        do {
            return json(try await work())
        } catch {
            switch error {
            case .invalid(let message): throw HTTPError(.badRequest, message: message)
            case .busy(let message): throw HTTPError(.conflict, message: message)
            case .unavailable(let message): throw HTTPError(.serviceUnavailable, message: message)
            }
        }
    }

    static let lastEventID = HTTPFields.Element.Name("Last-Event-ID")!

    static func integer(_ request: Request, _ name: String, default value: Int64) throws -> Int64 {
        guard let text = request.uri.queryParameters[Substring(name)] else { return value }
        guard let number = Int64(text), number >= 0 else { throw HTTPError(.badRequest, message: "'\(name)' must be a non-negative integer") }
        return number
    }

    /// ntfy's durations: 30s, 10m, 2h, 1d.
    static func duration(_ text: String) -> Double? {
        guard let unit = text.last, let value = Double(text.dropLast()), value >= 0 else { return nil }
        switch unit {
        case "s": return value
        case "m": return value * 60
        case "h": return value * 3600
        case "d": return value * 86400
        default: return nil
        }
    }

    static func json(_ text: String) -> Response {
        Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: text)))
    }
}
