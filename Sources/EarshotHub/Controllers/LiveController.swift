import EarshotHubClient
import Foundation
import Hummingbird
import HummingbirdWebSocket
import NIOCore

/// `/api/live`: a WebSocket of `LiveFrame`s. Every connection receives; a connection that sends
/// frames (a listening Earshot) feeds all the others.
struct LiveController {
    let relay: LiveRelay

    func addRoutes(to router: Router<BasicWebSocketRequestContext>) {
        let relay = self.relay
        router.ws("/api/live") { inbound, outbound, _ in
            let id = UUID()
            let frames = await relay.join(id)
            let sender = Task {
                for await frame in frames { try await outbound.write(.binary(ByteBuffer(bytes: frame))) }
            }
            defer { sender.cancel() }
            for try await message in inbound.messages(maxSize: LiveFrame.headerBytes + LiveFrame.maximumBands) {
                guard case .binary(let buffer) = message else { continue }
                let frame: LiveFrame
                do {
                    frame = try LiveFrame(bytes: buffer.readableBytesView)
                } catch let error as HubRequestError {
                    try await outbound.close(.unacceptableData, reason: error.message)
                    break
                }
                await relay.publish(frame, bytes: Array(buffer.readableBytesView), from: id)
            }
            await relay.leave(id)
        }
    }

    /// The same path over plain HTTP says what it is.
    func addPlainRoutes(to router: Router<HubRequestContext>) {
        router.get("/api/live") { _, _ -> Response in
            throw HTTPError(.upgradeRequired, message: "/api/live is a WebSocket")
        }
    }
}
