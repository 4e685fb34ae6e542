import EarshotCore
import EarshotIO

/// Live echo cancellation's input: the microphone as channel 0, and as channel 1 what the
/// loudspeaker played at the same moment. The far end is handed to the loudspeaker block by block
/// in step with the capture, so its echo reaches the microphone one playback block plus the
/// devices' output and input latency later, well inside the echo canceller's filter.
///
/// When the loudspeaker asks for more than it has been handed (it takes its buffer's worth at a
/// time; the capture may come late), it plays silence, and everything after is played that much
/// later. The gap goes into channel 1 too, at the same place (the loudspeaker had played all it
/// was handed), so the echo path the canceller models keeps its delay instead of jumping by the
/// gap: through PulseAudio, jumps of 1–15 ms undid the cancellation in most live starts.
final class PlayedFarEnd: AudioSource {
    let capture: DeviceCapture
    let playback: DevicePlayback
    let far: [Float]
    /// How far the far end has been handed to the loudspeaker, and how far into channel 1.
    private(set) var position = 0
    private var referencePosition = 0
    /// Silence the loudspeaker played that channel 1 has still to carry.
    private var gapLeft = 0
    /// The loudspeaker's silence counted so far; what it played before it was handed anything
    /// is no gap.
    private var silenceSeen: Int?
    private var scratch: AudioBuffer

    var sampleRate: Double { capture.sampleRate }
    var channelCount: Int { 2 }

    /// `far` at the capture's rate, already within the output ceiling; `playback` opened steady.
    init(capture: DeviceCapture, playback: DevicePlayback, far: [Float]) {
        self.capture = capture
        self.playback = playback
        self.far = far
        scratch = AudioBuffer(channelCount: 2, capacityFrames: 4096)
    }

    func read(into block: AudioBlock) throws -> Int {
        if scratch.capacityFrames < block.frameCount { scratch = AudioBuffer(channelCount: 2, capacityFrames: block.frameCount) }
        let parts = scratch.block(frameCount: block.frameCount)
        let mic = parts.channel(0), played = parts.channel(1)
        let got = try capture.read(into: AudioBlock(base: mic.baseAddress!, channelCount: 1, frameCount: block.frameCount, channelStride: block.frameCount))
        guard got > 0 else { return 0 }
        block.channel(0).baseAddress!.update(from: mic.baseAddress!, count: got)
        let silence = playback.underrunSamples
        gapLeft += silence - (silenceSeen ?? silence)
        silenceSeen = silence
        let reference = block.channel(1)
        for i in 0..<got {
            played[i] = position + i < far.count ? far[position + i] : 0
            if gapLeft > 0 {
                reference[i] = 0
                gapLeft -= 1
            } else {
                reference[i] = referencePosition < far.count ? far[referencePosition] : 0
                referencePosition += 1
            }
        }
        position += got
        try playback.write(AudioBlock(base: played.baseAddress!, channelCount: 1, frameCount: got, channelStride: got))
        return got
    }
}
