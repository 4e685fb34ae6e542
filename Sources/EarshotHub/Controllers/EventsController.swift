import EarshotHubClient
import Foundation
import Hummingbird

/// `/api/events`: producers post events, clients list and follow them, and a person says "not
/// my doorbell" about one; and the ntfy topic (`/TOPIC/json`, `/TOPIC/sse`) the ntfy app
/// subscribes to.
struct EventsController {
    let store: EventStore
    let sounds: SoundStore
    let broadcast: EventBroadcast
    let stream: EventStream

    /// Under `/api/events`.
    func addRoutes(to group: RouterGroup<HubRequestContext>) {
        group.post(use: post)
        group.get(use: list)
        group.get("stream", use: follow)
        group.get("rejectable") { _, _ in Rejectable(events: try await store.rejectable()) }
        group.post(":id/reject", use: reject)
    }

    /// At the root: `/TOPIC/json` and `/TOPIC/sse`.
    func addTopicRoutes(to group: RouterGroup<HubRequestContext>) {
        group.get(":topic/json") { request, context in try await ntfy(request, context, format: .ntfyJSON) }
        group.get(":topic/sse") { request, context in try await ntfy(request, context, format: .ntfySSE) }
    }

    struct Created: ResponseEncodable {
        var id: Int64
    }

    /// 201 with the new id once the event is on the disk; 200 with the first id for a key seen before.
    @Sendable func post(_ request: Request, context: HubRequestContext) async throws -> EditedResponse<Created> {
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
        return EditedResponse(status: isNew ? .created : .ok, response: Created(id: event.id))
    }

    /// `?since=ID&limit=N`: the events after an id, oldest first.
    @Sendable func list(_ request: Request, context: HubRequestContext) async throws -> [StoredEvent] {
        let since = try Self.integer(request, "since", default: 0)
        let limit = try Self.integer(request, "limit", default: 1000)
        guard limit >= 1, limit <= 10_000 else { throw HTTPError(.badRequest, message: "'limit' must be 1–10000") }
        return try await store.events(after: since, limit: Int(limit))
    }

    /// Server-Sent Events after `Last-Event-ID`, `?since=ID`, or `?since=latest`.
    @Sendable func follow(_ request: Request, context: HubRequestContext) async throws -> Response {
        let since: Int64
        if let value = request.headers[Self.lastEventID] {
            guard let id = Int64(value), id >= 0 else { throw HTTPError(.badRequest, message: "Last-Event-ID must be an event id") }
            since = id
        } else if request.uri.queryParameters["since"] == "latest" {
            since = try await store.latestID()
        } else {
            since = try Self.integer(request, "since", default: 0)
        }
        return stream.response(after: since, format: .serverSentEvents)
    }

    /// `GET /api/events/rejectable`: the sound events "not my doorbell" can act on.
    struct Rejectable: ResponseEncodable {
        var events: [Int64]
    }

    struct Rejected: ResponseEncodable {
        var rejected: Int64
        var sound: String
    }

    /// Not my doorbell: what was heard with a sound event becomes evidence against that sound.
    @Sendable func reject(_ request: Request, context: HubRequestContext) async throws -> Rejected {
        let text = context.parameters.get("id") ?? ""
        guard let id = Int64(text), id > 0 else { throw HTTPError(.badRequest, message: "'\(text)' is not an event id") }
        guard let origin = try await store.origin(of: id) else { throw HTTPError(.notFound, message: "no event \(id)") }
        guard origin.kind == .sound else { throw HTTPError(.conflict, message: "event \(id) is not one of your sounds") }
        guard let key = origin.key, let name = try sounds.rejectHeard(key: key) else {
            throw HTTPError(.conflict, message: "no recording of event \(id) is kept here (only the latest \(SoundStore.heardKept) heard by a watch sharing this data folder)")
        }
        return Rejected(rejected: id, sound: name)
    }

    /// ntfy's subscribe API: `since` is all, a duration (10m), a unix time or an id; by default
    /// only what arrives from now on. `poll=1` answers with what is stored and ends.
    private func ntfy(_ request: Request, _ context: HubRequestContext, format: EventStream.Format) async throws -> Response {
        guard context.parameters.get("topic") == stream.topic else { throw HTTPError(.notFound, message: "no such topic") }
        let query = request.uri.queryParameters
        var since: Int64?
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
        let poll = query["poll"].map { $0 == "1" || $0 == "true" } ?? false
        let after = if let since { since } else { try await store.latestID() }
        return stream.response(after: after, format: format, poll: poll)
    }

    /// The id just before the first event received at or after `time`.
    private func firstID(receivedSince time: Double) async throws -> Int64 {
        if let first = try await store.events(receivedSince: time, limit: 1).first { return first.id - 1 }
        return try await store.latestID()
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
}
