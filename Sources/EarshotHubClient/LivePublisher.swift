import Foundation
import HummingbirdWSClient
import Logging
import NIOCore

/// Feeds a hub's `/api/live` with `LiveFrame`s. `send` returns at once: a frame that cannot go
/// now is replaced by the next one (live pictures are worth nothing late), and a lost
/// connection is made again every second until `close`.
public final class LivePublisher: Sendable {
    private let frames: AsyncStream<[UInt8]>.Continuation
    private let connection: Task<Void, Never>

    public init(address: HubAddress) {
        var parts = URLComponents(url: address.url, resolvingAgainstBaseURL: false)!
        parts.scheme = parts.scheme == "https" ? "wss" : "ws"
        parts.path += "/api/live"
        parts.queryItems = [URLQueryItem(name: "token", value: address.token)]
        let url = parts.string!
        let (stream, continuation) = AsyncStream<[UInt8]>.makeStream(bufferingPolicy: .bufferingNewest(2))
        frames = continuation
        connection = Task {
            let logger = Logger(label: "earshot.live", factory: { _ in SwiftLogNoOpLogHandler() })
            while !Task.isCancelled {
                _ = try? await WebSocketClient.connect(url: url, logger: logger) { inbound, outbound, _ in
                    // What the hub sends a source (idle frames, other sources) is of no use here.
                    let drain = Task { for try await _ in inbound {} }
                    defer { drain.cancel() }
                    // One connection at a time reads the frames, so the stream has one reader.
                    for await frame in stream {
                        try await outbound.write(.binary(ByteBuffer(bytes: frame)))
                    }
                    try await outbound.close(.normalClosure, reason: nil)
                }
                try? await Task.sleep(for: .seconds(1))
            }
        }
    }

    public func send(_ frame: LiveFrame) {
        frames.yield(frame.bytes)
    }

    public func close() {
        frames.finish()
        connection.cancel()
    }
}
