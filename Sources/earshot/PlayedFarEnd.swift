import EarshotCore
import EarshotIO

/// Live echo cancellation's input: the microphone as channel 0, and as channel 1 what is handed
/// to the loudspeaker at the same moment — the far end, played block by block in step with the
/// capture. Its echo reaches the microphone one playback block plus the devices' output and
/// input latency later, well inside the echo canceller's filter; what is played is known exactly,
/// with no second capture of it to line up.
final class PlayedFarEnd: AudioSource {
    let capture: DeviceCapture
    let playback: DevicePlayback
    let far: [Float]
    private(set) var position = 0
    private var scratch: AudioBuffer

    var sampleRate: Double { capture.sampleRate }
    var channelCount: Int { 2 }

    /// `far` at the capture's rate, already within the output ceiling.
    init(capture: DeviceCapture, playback: DevicePlayback, far: [Float]) {
        self.capture = capture
        self.playback = playback
        self.far = far
        scratch = AudioBuffer(channelCount: 1, capacityFrames: 4096)
    }

    func read(into block: AudioBlock) throws -> Int {
        if scratch.capacityFrames < block.frameCount { scratch = AudioBuffer(channelCount: 1, capacityFrames: block.frameCount) }
        let mic = scratch.block(frameCount: block.frameCount)
        let got = try capture.read(into: mic)
        guard got > 0 else { return 0 }
        block.channel(0).baseAddress!.update(from: mic.channel(0).baseAddress!, count: got)
        let farChannel = block.channel(1)
        for i in 0..<got { farChannel[i] = position + i < far.count ? far[position + i] : 0 }
        position += got
        try playback.write(AudioBlock(base: farChannel.baseAddress!, channelCount: 1, frameCount: got, channelStride: got))
        return got
    }
}
