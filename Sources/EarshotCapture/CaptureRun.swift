import Atomics
import EarshotAlerts
import EarshotCore
import EarshotDSP
import EarshotEnhance
import EarshotHearingAid
import EarshotIO

extension CaptureMode {
    /// Live, the far end reaches the microphone after both devices' buffers (through PulseAudio
    /// 20–55 ms, set anew at each start, and more than 0.5 s at times), which the filter has to
    /// find within its length: it spans 1 s. A filter that long learns as slowly as it is long,
    /// so once it has found where the path lies it narrows to the 0.3 s around it
    /// (`EchoPathFilter.narrowsTo`); through PulseAudio with real speech as the far end the echo
    /// then went 45–72 dB under the near talker in 24 of 28 starts (docs/capture.md, live echo cancellation).
    public static let liveEchoTailSeconds = 1.0
    public static let liveEchoPathSeconds = 0.3

    /// The mode's chain at `rate`, on blocks of (microphone, far end).
    public func chain(rate: Double, echoTailSeconds: Double = 0.5, echoPathSeconds: Double? = nil) throws -> ProcessorChain {
        let ceiling = FirstChannel(OutputLevelGuard(ceilingDBFS: -1))
        switch self {
        case .raw:
            return ProcessorChain()
        case .standard:
            return ProcessorChain([
                FirstChannel(BiquadFilter(.highPass, frequencyHz: 80, sampleRate: rate)),
                FirstChannel(try NoiseSuppressor(model: .learned, strengthDB: 10)),
                FirstChannel(AutomaticGainControl()), ceiling,
            ])
        case .voiceIsolation:
            return ProcessorChain([
                // Live, the suppressor goes as deep as before the file defaults changed: a filter that
                // narrows from a second of path converges less deeply, and with −25 dB and 3 dB
                // assumed three of six live starts left the echo 10–17 dB under the near talker
                // (`Tests/Live/live_echo.py`), against 19–25 dB in four starts with these.
                EchoCanceller(tailSeconds: echoTailSeconds, pathSeconds: echoPathSeconds,
                              floorDB: EchoCanceller.liveFloorDB, overestimateDB: EchoCanceller.liveOverestimateDB),
                FirstChannel(BiquadFilter(.highPass, frequencyHz: 80, sampleRate: rate)),
                FirstChannel(try ListeningChain(detector: try AlertNetwork.bundled(), maximumOutputDBFS: nil)),
                FirstChannel(AutomaticGainControl()), ceiling,
            ])
        case .wideSpectrum:
            return ProcessorChain([
                FirstChannel(AutomaticGainControl(averagingSeconds: 4, minimumGainDB: -10, maximumGainDB: 15)), ceiling,
            ])
        }
    }

    /// A recording through the mode, written to `output` at its own rate and sample format;
    /// `farEnd` (voice isolation) is what the loudspeaker played.
    public func process(_ path: String, farEnd: String?, to output: String) throws {
        let recording = try MonoRecording(path: path)
        let info = recording.info, mic = recording.samples
        var farSignal = [Float](repeating: 0, count: mic.count), echoTail = 0.5
        if let farEnd { (farSignal, echoTail) = try recording.farEnd(farEnd, longestTailSeconds: echoTail) }
        if self == .raw {
            try AudioFile.write(AudioBuffer(channels: [mic]), to: output, sampleRate: info.sampleRate, sampleFormat: info.sampleFormat)
            return
        }
        // The chain runs at the suppressor's native rate (16 or 48 kHz).
        let native = NoiseSuppressor.nativeRate(for: info.sampleRate)
        let channels = try Resampler.resample([mic, farSignal], from: info.sampleRate, to: native)
        let sink = MemorySink(channelCount: 2)
        try Runner(blockFrames: 1024, compensateLatency: true)
            .run(source: MemorySource(channels: channels, sampleRate: native), chain: try chain(rate: native, echoTailSeconds: echoTail), sink: sink)
        var out = try Resampler.resample([sink.channels[0]], from: native, to: info.sampleRate)[0]
        out = Array(out.prefix(mic.count)) + [Float](repeating: 0, count: max(0, mic.count - out.count))
        // Resampling back can overshoot a hair: the guard holds after it too.
        var result = [out]
        try OutputLevelGuard(ceilingDBFS: -1).apply(to: &result, sampleRate: info.sampleRate)
        try AudioFile.write(AudioBuffer(channels: result), frameCount: out.count, to: output, sampleRate: info.sampleRate, sampleFormat: info.sampleFormat)
    }
}

/// A live capture in one of the modes, from an input device to a file; in voice isolation, with
/// a far end played through a loudspeaker as a call would and its echo taken out.
public struct LiveCapture {
    public static let rate = ListeningChain.liveRate

    public let mode: CaptureMode
    public let microphone: AudioDeviceInfo
    /// What the loudspeaker plays, at `rate` and under the output ceiling, and where.
    public let farEnd: (samples: [Float], speaker: AudioDeviceInfo)?
    /// Frames to capture; nil until stopped.
    public let limitFrames: Int?

    /// `seconds` nil: a far end stops the capture half a second after it ends; without one it
    /// runs until stopped.
    public init(mode: CaptureMode, microphone: AudioDeviceInfo, farEnd: (samples: [Float], speaker: AudioDeviceInfo)?, seconds: Double?) {
        self.mode = mode
        self.microphone = microphone
        self.farEnd = farEnd
        limitFrames = seconds.map { Int($0 * Self.rate) } ?? farEnd.map { $0.samples.count + Int(0.5 * Self.rate) }
    }

    /// The recording at `path` as a far end to play: at the live rate and under `ceiling`, so
    /// what is played is exactly what the echo canceller is told was played.
    public static func farEnd(_ path: String, under ceiling: OutputLevelGuard) throws -> [Float] {
        let recording = try MonoRecording(path: path)
        var samples = try Resampler.resample([recording.samples], from: recording.info.sampleRate, to: rate)
        try ceiling.apply(to: &samples, sampleRate: rate)
        return samples[0]
    }

    public func run(into output: String, stop: ManagedAtomic<Bool>) throws {
        let rate = Self.rate
        let sink = try AudioEndpoints().openSink(output, sampleRate: rate, channelCount: 1, sampleFormat: nil)
        // The loudspeaker opens first, so the first far-end block has somewhere to go, and steady:
        // a delay that jumps undoes what the echo canceller has learnt.
        let playback = try farEnd.map { try DevicePlayback(device: $0.speaker, sampleRate: rate, channelCount: 1, steady: true) }
        defer { playback?.discard() }
        let capture = try DeviceCapture(device: microphone, sampleRate: rate, channelCount: 1, stop: stop, stallSeconds: 3)
        defer { capture.close() }
        let chain = try mode.chain(rate: rate, echoTailSeconds: CaptureMode.liveEchoTailSeconds, echoPathSeconds: CaptureMode.liveEchoPathSeconds)
        let runner = Runner(blockFrames: 480, compensateLatency: false, maximumFrames: limitFrames, stop: stop)
        if let playback, let farEnd {
            try runner.run(source: PlayedFarEndSource(capture: capture, playback: playback, far: farEnd.samples), chain: chain, sink: FirstChannelSink(sink))
        } else {
            // No far end: the chain gets a second, empty channel.
            let paired = try ChannelMappedSource(capture, channelCount: 2)
            try runner.run(source: paired, chain: ProcessorChain([SilenceFarEnd(), chain]), sink: FirstChannelSink(sink))
        }
    }
}

extension EchoCanceller {
    /// The far end (what the loudspeaker played, from its start) taken out of a microphone
    /// recording, written to `output` at the microphone's rate and sample format, lined up with it.
    /// Both are mixed to mono; the far end is resampled to the microphone's rate.
    public static func cancel(microphone path: String, farEnd: String, tailSeconds: Double, floorDB: Double, overestimateDB: Double,
                              maskExponent: Double, comfortNoiseDB: Double?, to output: String) throws {
        let recording = try MonoRecording(path: path)
        let rate = recording.info.sampleRate
        guard (8_000...48_000).contains(rate) else { throw CaptureError.echoRecordingRate(path: path, rate: rate) }
        let (far, tail) = try recording.farEnd(farEnd, longestTailSeconds: tailSeconds)
        let sink = MemorySink(channelCount: 2)
        let canceller = EchoCanceller(tailSeconds: tail, floorDB: floorDB, overestimateDB: overestimateDB,
                                      maskExponent: maskExponent, comfortNoiseDB: comfortNoiseDB)
        try Runner(blockFrames: 1024, compensateLatency: true)
            .run(source: MemorySource(channels: [recording.samples, far], sampleRate: rate), chain: canceller, sink: sink)
        let cleaned = Array(sink.channels[0].prefix(recording.samples.count))
        try AudioFile.write(AudioBuffer(channels: [cleaned]), to: output, sampleRate: rate, sampleFormat: recording.info.sampleFormat)
    }
}
