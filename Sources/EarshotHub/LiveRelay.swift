import EarshotHubClient
import Foundation

/// Passes live frames from the connection that feeds them (a listening Earshot) to every other
/// connection on `/api/live` (dashboards). While nothing feeds it, it sends idle frames at the
/// same rate, so a viewer can tell "quiet" from "no microphone".
actor LiveRelay {
    static let framesPerSecond = 20.0
    /// A source silent for this long counts as gone.
    static let sourceTimeout: Duration = .milliseconds(500)

    private var viewers: [UUID: AsyncStream<[UInt8]>.Continuation] = [:]
    private var lastSourceFrame: ContinuousClock.Instant?
    private var latest: LiveFrame?
    private var idleSequence: UInt32 = 0

    /// A viewer's frames; a slow viewer loses old frames, never holds memory.
    func join(_ id: UUID) -> AsyncStream<[UInt8]> {
        let (stream, continuation) = AsyncStream<[UInt8]>.makeStream(bufferingPolicy: .bufferingNewest(8))
        viewers[id] = continuation
        return stream
    }

    func leave(_ id: UUID) {
        viewers.removeValue(forKey: id)?.finish()
    }

    /// A frame from a source, already read, to everyone but its sender.
    func publish(_ frame: LiveFrame, bytes: [UInt8], from sender: UUID) {
        lastSourceFrame = .now
        latest = frame
        for (id, viewer) in viewers where id != sender { viewer.yield(bytes) }
    }

    /// The latest frame of a source that is still feeding the hub; nil while none is.
    func current() -> LiveFrame? {
        guard let last = lastSourceFrame, ContinuousClock.now - last < Self.sourceTimeout else { return nil }
        return latest
    }

    /// Idle frames while no source is live; runs until cancelled.
    func tick() async {
        let period = Duration.seconds(1 / Self.framesPerSecond)
        while !Task.isCancelled {
            try? await Task.sleep(for: period)
            if let last = lastSourceFrame, ContinuousClock.now - last < Self.sourceTimeout { continue }
            idleSequence &+= 1
            let frame = LiveFrame.idle(sequence: idleSequence).bytes
            for viewer in viewers.values { viewer.yield(frame) }
        }
    }

    func closeAll() {
        for viewer in viewers.values { viewer.finish() }
        viewers.removeAll()
    }
}
