import AsyncHTTPClient
import EarshotCore
import Foundation
import NIOCore
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
                    if response.status == .unauthorized { throw HubClientError.tokenRefused }
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
            } catch let error as EarshotFailure where error.isBadInput {
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
