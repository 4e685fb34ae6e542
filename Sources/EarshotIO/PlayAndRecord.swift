import Atomics
import EarshotCore
import EarshotDSP
import Foundation

/// Plays a signal on one device while another records the same span: a measurement's sweep and
/// what the room made of it.
public enum PlayAndRecord {
    /// The recording, as long as `signal`; `ceiling` guards what is played.
    public static func run(_ signal: [Float], sampleRate: Double, from input: AudioDeviceInfo, to output: AudioDeviceInfo,
                           ceiling: OutputLevelGuard, stop: ManagedAtomic<Bool>) throws -> [Float] {
        let capture = try DeviceCapture(device: input, sampleRate: sampleRate, channelCount: 1, stop: stop)
        let playback = try DevicePlayback(device: output, sampleRate: sampleRate, channelCount: 1)
        let playbackFailed = ManagedAtomic<Bool>(false)
        // The playback sink and the guard move to the player thread and are used only there from now on.
        nonisolated(unsafe) let handedOver = playback, guardStage = ceiling
        let player = Thread {
            do {
                try Runner(blockFrames: 1024, compensateLatency: false, stop: stop)
                    .run(source: MemorySource(channels: [signal], sampleRate: sampleRate), chain: guardStage, sink: handedOver)
            } catch {
                playbackFailed.store(true, ordering: .relaxed)
            }
        }
        player.start()
        let sink = MemorySink(channelCount: 1)
        try Runner(blockFrames: 1024, compensateLatency: false, maximumFrames: signal.count, stop: stop)
            .run(source: capture, chain: ProcessorChain(), sink: sink)
        capture.close()
        while player.isExecuting { usleep(10_000) }
        guard !playbackFailed.load(ordering: .relaxed) else { throw EarshotError.deviceFailure("playback of the signal failed") }
        guard !stop.load(ordering: .relaxed) else { throw EarshotError.interrupted(what: "the measurement") }
        return sink.channels[0]
    }
}
