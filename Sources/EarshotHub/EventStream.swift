import EarshotHubClient
import Foundation
import Hummingbird
import NIOCore
import ServiceLifecycle

/// One long response of events: everything after an id from the store, then whatever arrives,
/// with heartbeats, until the client goes away or the hub shuts down. As Server-Sent Events for
/// monitors and the dashboard, or as ntfy's JSON lines and SSE for the ntfy app.
struct EventStream: Sendable {
    enum Format: Sendable {
        case serverSentEvents, ntfyJSON, ntfySSE
    }

    let store: EventStore
    let broadcast: EventBroadcast
    let topic: String
    let heartbeatSeconds: Double

    /// Subscribed before the replay, so nothing that arrives during it is missed, and ids
    /// already replayed are skipped. With `poll`, the replay alone.
    func response(after since: Int64, format: Format, poll: Bool = false) -> Response {
        let contentType = format == .ntfyJSON ? "application/x-ndjson; charset=utf-8" : "text/event-stream"
        let topic = self.topic, heartbeat = heartbeatSeconds
        let store = self.store, broadcast = self.broadcast
        return Response(
            status: .ok, headers: [.contentType: contentType, .cacheControl: "no-cache"],
            body: .init { writer in
                let live = await broadcast.subscribe()
                if format != .serverSentEvents && !poll { try await writer.write(ByteBuffer(string: Self.open(topic: topic, format: format))) }
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

    static func render(_ event: StoredEvent, format: Format, topic: String) -> String {
        switch format {
        case .serverSentEvents: return "id: \(event.id)\ndata: \(event.json)\n\n"
        case .ntfyJSON: return NtfyMessage(event, topic: topic).json + "\n"
        case .ntfySSE: return "id: \(event.id)\nevent: message\ndata: \(NtfyMessage(event, topic: topic).json)\n\n"
        }
    }

    static func open(topic: String, format: Format) -> String {
        let line = NtfyMessage(event: "open", topic: topic).json
        return format == .ntfySSE ? "event: open\ndata: \(line)\n\n" : line + "\n"
    }

    static func keepalive(format: Format, topic: String) -> String {
        let line = NtfyMessage(event: "keepalive", topic: topic).json
        switch format {
        case .serverSentEvents: return ": heartbeat\n\n"
        case .ntfyJSON: return line + "\n"
        case .ntfySSE: return "event: keepalive\ndata: \(line)\n\n"
        }
    }
}

/// A message as ntfy's subscribe API sends it: an event (urgent for alerts, default priority for
/// sounds, the lowest while quiet), or the stream's `open` and `keepalive`.
struct NtfyMessage: Encodable {
    var id: String
    var time: Int
    var event: String
    var topic: String
    var title: String?
    var message: String?
    var priority: Int?
    var tags: [String]?

    init(_ stored: StoredEvent, topic: String) {
        let words = stored.label.replacingOccurrences(of: "_", with: " ")
        var message = "\(words) (\(stored.kind.rawValue)"
        if let confidence = stored.confidence { message += String(format: ", confidence %.2f", confidence) }
        message += ")"
        if let source = stored.source { message += " at \(source)" }
        id = String(stored.id)
        time = Int(EventSubmission.parseISO8601(stored.time)?.timeIntervalSince1970 ?? 0)
        event = "message"
        self.topic = topic
        title = words.capitalized
        self.message = message
        priority = stored.kind == .alert ? 5 : stored.quiet ? 1 : 3
        tags = [stored.kind == .alert ? "rotating_light" : "bell"]
    }

    init(event: String, topic: String) {
        id = event
        time = Int(Date().timeIntervalSince1970)
        self.event = event
        self.topic = topic
    }

    var json: String { String(decoding: try! HubRequestContext.encoder.encode(self), as: UTF8.self) }
}
