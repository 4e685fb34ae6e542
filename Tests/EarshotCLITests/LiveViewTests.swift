import EarshotHub
import EarshotHubClient
import EarshotTestSupport
import Foundation
import HummingbirdWSClient
import Logging
import NIOCore
import Testing

/// Frames a viewer of `/api/live` received, gathered across the connection's tasks.
private final class Received: @unchecked Sendable {
    private let lock = NSLock()
    private var frames: [LiveFrame] = []
    func append(_ frame: LiveFrame) { lock.withLock { frames.append(frame) } }
    var all: [LiveFrame] { lock.withLock { frames } }
}

private let quiet = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })

/// Watches `/api/live` until `done` says so or `seconds` have passed since connecting; returns
/// what arrived and how the hub closed, if it did.
private func watchLive(_ hub: RunningHub, token: String, seconds: Double,
                       until done: @escaping @Sendable (LiveFrame) -> Bool = { _ in false }) async throws -> ([LiveFrame], WebSocketCloseFrame?) {
    let received = Received()
    let url = "ws://127.0.0.1:\(hub.port)/api/live?token=\(token)"
    let close = try await WebSocketClient.connect(url: url, logger: quiet) { inbound, outbound, _ in
        // `seconds` of listening from the connection on: under a loaded test run the connection
        // itself can take most of them.
        let end = ContinuousClock.now + .seconds(seconds)
        for try await message in inbound.messages(maxSize: 1 << 16) {
            if case .binary(let buffer) = message {
                let frame = try LiveFrame(bytes: buffer.readableBytesView)
                received.append(frame)
                if done(frame) { break }
            }
            if ContinuousClock.now >= end { break }
        }
        try await outbound.close(.normalClosure, reason: nil)
    }
    return (received.all, close)
}

@Suite struct LiveFrameTests {
    @Test func roundTripKeepsEverythingToItsResolution() throws {
        let frame = LiveFrame(alerting: true, lowHz: 50, highHz: 16_000, levelDBFS: -23.456, peakDBFS: -3.2, sequence: 70_001,
                              bandsDB: [-130, -120, -60.2, -0.3, 7, 20])
        let bytes = frame.bytes
        #expect(bytes.count == 16 + 6)
        let back = try LiveFrame(bytes: bytes)
        #expect(back.alerting && !back.idle && back.lowHz == 50 && back.highHz == 16_000 && back.sequence == 70_001)
        #expect(abs(back.levelDBFS - -23.45) < 0.011 && abs(back.peakDBFS - -3.2) < 0.011)
        // 0.5 dB steps from −120 dB up to +7.5 dB; beyond, clamped.
        #expect(back.bandsDB == [-120, -120, -60, -0.5, 7, 7.5])
    }

    @Test func malformedFramesAreRefused() {
        let good = LiveFrame(lowHz: 50, highHz: 8000, levelDBFS: -40, peakDBFS: -30, sequence: 1, bandsDB: [-50, -60]).bytes
        var wrongVersion = good; wrongVersion[0] = 2
        var unknownFlags = good; unknownFlags[1] = 8
        var downwards = good; downwards[4] = 0xFF; downwards[5] = 0xFF
        for bad in [[], Array(good.prefix(10)), Array(good.dropLast()), good + [0], wrongVersion, unknownFlags, downwards] {
            #expect(throws: HubRequestError.self) { try LiveFrame(bytes: bad) }
        }
    }
}

@Suite(.serialized) struct LiveViewTests {
    /// With nothing feeding it, the hub says so, frame after frame. (Their rate, 20 a second, is
    /// measured in Tests/Live/dashboard.py, where nothing else competes for the machine: here,
    /// tests running side by side can hold a connection's frames back for seconds.)
    @Test func idleHubSendsIdleFrames() async throws {
        try await withTemporaryDirectoryAsync { dir in
            let hub = try RunningHub(directory: dir)
            let counter = Received()
            let (frames, _) = try await watchLive(hub, token: hub.token, seconds: 30, until: { frame in
                counter.append(frame)
                return counter.all.count >= 10
            })
            #expect(frames.count >= 10 && frames.allSatisfy { $0.idle && $0.bandsDB.isEmpty })
            #expect(zip(frames, frames.dropFirst()).allSatisfy { $0.sequence < $1.sequence })
        }
    }

    /// A source's frames reach a viewer unchanged and in order, and idle frames stop while it
    /// feeds.
    @Test func sourceFramesReachViewers() async throws {
        try await withTemporaryDirectoryAsync { dir in
            let hub = try RunningHub(directory: dir)
            let publisher = LivePublisher(address: try HubAddress(url: hub.url, token: hub.token))
            defer { publisher.close() }
            let sent = (1...60).map { (n: Int) -> LiveFrame in
                let bands: [Float] = (0..<96).map { (band: Int) -> Float in Float((band + n) % 90) - 100 }
                return LiveFrame(alerting: n > 30, lowHz: 50, highHz: 16_000, levelDBFS: Float(-30 - n % 7), peakDBFS: -12,
                                 sequence: UInt32(n), bandsDB: bands)
            }
            let feeding = Task {
                for frame in sent {
                    publisher.send(frame)
                    try await Task.sleep(for: .milliseconds(50))
                }
            }
            // Until the last frame arrives: a busy machine may delay it, and the hub keeps the
            // newest frames for a slow viewer, so the last always comes.
            let (frames, _) = try await watchLive(hub, token: hub.token, seconds: 30, until: { !$0.idle && $0.sequence == 60 })
            try await feeding.value
            let fed = frames.filter { !$0.idle }
            #expect(fed.last?.sequence == 60 && fed.count >= 8, "\(fed.count) source frames of \(frames.count)")
            #expect(fed.map(\.sequence) == fed.map(\.sequence).sorted())
            for frame in fed { #expect(try LiveFrame(bytes: sent[Int(frame.sequence) - 1].bytes) == frame) }
            // Once the source is live, idle frames stop: they come between its frames only as a
            // run where the feeding task itself stalled past the relay's 0.5 s timeout (parallel
            // tests can starve it for seconds), never as a steady interleave, which would make
            // about one run per source frame.
            if let first = frames.firstIndex(where: { !$0.idle }), let last = frames.lastIndex(where: { !$0.idle }) {
                let span = frames[first...last]
                let runs = zip(span, span.dropFirst()).filter { !$0.0.idle && $0.1.idle }.count
                #expect(runs * 4 <= fed.count, "\(runs) runs of idle frames among \(fed.count) source frames")
            }
        }
    }

    @Test func refusesWithoutTokenAndClosesOnAMalformedFrame() async throws {
        try await withTemporaryDirectoryAsync { dir in
            let hub = try RunningHub(directory: dir)
            await #expect(throws: (any Error).self) { _ = try await watchLive(hub, token: "wrong-token-0123456789", seconds: 0.5) }
            let plain = try await hub.request(.GET, "/api/live", token: hub.token)
            #expect(plain.status == 426)
            let close = try await WebSocketClient.connect(url: "ws://127.0.0.1:\(hub.port)/api/live?token=\(hub.token)", logger: quiet) { inbound, outbound, _ in
                try await outbound.write(.binary(ByteBuffer(bytes: [1, 0, 5, 0])))
                for try await _ in inbound {}
            }
            #expect(close?.closeCode == .unacceptableData)
            #expect(try await hub.request(.GET, "/api/health").status == 200)
        }
    }
}
