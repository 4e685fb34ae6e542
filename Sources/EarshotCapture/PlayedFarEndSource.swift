import EarshotCore
import EarshotIO

/// Live echo cancellation's input: the microphone as channel 0, and as channel 1 what the
/// loudspeaker played at the same moment (`PlayedFarEnd`). The far end is handed to the
/// loudspeaker block by block in step with the capture, so its echo reaches the microphone one
/// playback block plus the devices' output and input latency later, well inside the echo
/// canceller's filter.
public final class PlayedFarEndSource: AudioSource {
    public let capture: DeviceCapture
    public let playback: DevicePlayback
    private var reference: PlayedFarEnd
    private var played: [Float]

    public var sampleRate: Double { capture.sampleRate }
    public var channelCount: Int { 2 }

    /// `far` at the capture's rate, already within the output ceiling; `playback` opened steady.
    public init(capture: DeviceCapture, playback: DevicePlayback, far: [Float]) {
        self.capture = capture
        self.playback = playback
        reference = PlayedFarEnd(far: far)
        played = [Float](repeating: 0, count: 4096)
    }

    public func read(into block: AudioBlock) throws -> Int {
        if played.count < block.frameCount { played = [Float](repeating: 0, count: block.frameCount) }
        let got = try capture.read(into: AudioBlock(base: block.channel(0).baseAddress!, channelCount: 1, frameCount: block.frameCount, channelStride: block.frameCount))
        guard got > 0 else { return 0 }
        try played.withUnsafeMutableBufferPointer { buffer in
            let part = UnsafeMutableBufferPointer(rebasing: buffer[..<got])
            reference.next(played: part, reference: UnsafeMutableBufferPointer(rebasing: block.channel(1)[..<got]), silencePlayed: playback.underrunSamples)
            try playback.write(AudioBlock(base: part.baseAddress!, channelCount: 1, frameCount: got, channelStride: got))
        }
        return got
    }
}

/// Silences channel 1: live, the microphone is copied there by the channel mapping, and no far end exists.
public final class SilenceFarEnd: AudioProcessor {
    public init() {}
    public var latencySamples: Int { 0 }
    public func prepare(_ spec: ProcessSpec) throws {}
    public func reset() {}
    public func process(_ block: inout AudioBlock) {
        for c in 1..<max(1, block.channelCount) { block.channel(c).update(repeating: 0) }
    }
}
