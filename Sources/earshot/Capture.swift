import ArgumentParser
import EarshotAlerts
import EarshotCapture
import EarshotCore
import EarshotDSP
import EarshotEnhance
import EarshotHearingAid
import EarshotIO
import Foundation

extension CaptureMode: ExpressibleByArgument {}

/// `earshot capture [IN] -o OUT --mode M`: record or process a microphone as a phone's capture modes do.
struct Capture: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Capture like a phone: raw, standard, voice-isolation or wide-spectrum.",
        discussion: """
            standard: 80 Hz high-pass, gentle noise suppression (10 dB), automatic gain to −20 dBFS. \
            voice-isolation: echo cancellation against what the loudspeaker played (--far on files; \
            live, the recording given with --play, played through the output device), the \
            learned noise suppressor at full strength with detected alert sounds kept out of it (as \
            in listen), automatic gain. wide-spectrum: no suppression, full bandwidth, slow and \
            gentle level control. Every mode but raw ends in a −1 dBFS peak guard. Without IN it \
            records from the input device until Ctrl-C or --seconds.
            """)

    @Argument(help: "A recording to process; without it, capture from the input device.")
    var input: String?

    @Option(name: .shortAndLong, help: "Output file.")
    var output: String

    @Option(help: "raw, standard, voice-isolation or wide-spectrum.")
    var mode: CaptureMode = .standard

    @Option(help: "The far end for echo cancellation (voice-isolation, files only): what the loudspeaker played.")
    var far: String?

    @Option(help: "Live voice-isolation: play this recording (the far end, as a call would) through the output device and take its echo out of the microphone. Capture stops half a second after it ends unless --seconds says otherwise.")
    var play: String?

    @Option(help: "Stop a live capture after this many seconds.")
    var seconds: Double?

    @OptionGroup var inputDevice: InputDeviceOption
    @OptionGroup var outputDevice: OutputDeviceOption
    @OptionGroup var ceiling: OutputCeilingOption

    func validate() throws {
        if far != nil, mode != .voiceIsolation { throw ValidationError("--far is for --mode voice-isolation") }
        if far != nil, input == nil { throw ValidationError("--far needs a recording (IN); live, give the far end with --play") }
        if play != nil, mode != .voiceIsolation { throw ValidationError("--play is for --mode voice-isolation") }
        if play != nil, input != nil { throw ValidationError("--play is for live capture: leave out IN, or give the far end with --far") }
        if let seconds, !(seconds.isFinite && seconds > 0 && seconds <= 86_400) {
            throw ValidationError("--seconds must be between 0 and 86400, not \(seconds)")
        }
        if input != nil, seconds != nil { throw ValidationError("--seconds is for live capture: leave out IN") }
    }

    /// Live, the far end reaches the microphone after both devices' buffers (through PulseAudio
    /// 20–55 ms, set anew at each start, and more than 0.5 s at times), which the filter has to
    /// find within its length: it spans 1 s. A filter that long learns as slowly as it is long,
    /// so once it has found where the path lies it narrows to the 0.3 s around it
    /// (`EchoPathFilter.narrowsTo`); through PulseAudio with real speech as the far end the echo
    /// then went 45–72 dB under the near talker in 24 of 28 starts (docs/capture.md, live echo cancellation).
    static let liveEchoTailSeconds = 1.0
    static let liveEchoPathSeconds = 0.3

    /// The mode's chain at `rate`, on blocks of (microphone, far end).
    static func chain(_ mode: CaptureMode, rate: Double, echoTailSeconds: Double = 0.5, echoPathSeconds: Double? = nil) throws -> ProcessorChain {
        let ceiling = FirstChannel(OutputLevelGuard(ceilingDBFS: -1))
        switch mode {
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
                EchoCanceller(tailSeconds: echoTailSeconds, pathSeconds: echoPathSeconds),
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

    func run() throws {
        try refuseOverwriting(output, inputs: [input, far, play])
        if let input { try processFile(input) } else { try captureLive() }
    }

    func processFile(_ path: String) throws {
        let recording = try MonoRecording(path: path)
        let info = recording.info, mic = recording.samples
        var farSignal = [Float](repeating: 0, count: mic.count), echoTail = 0.5
        if let far { (farSignal, echoTail) = try recording.farEnd(far, longestTailSeconds: echoTail) }
        if mode == .raw {
            try AudioFile.write(AudioBuffer(channels: [mic]), to: output, sampleRate: info.sampleRate, sampleFormat: info.sampleFormat)
            return
        }
        // The chain runs at the suppressor's native rate (16 or 48 kHz).
        let native = NoiseSuppressor.nativeRate(for: info.sampleRate)
        let channels = try Resampler.resample([mic, farSignal], from: info.sampleRate, to: native)
        let sink = MemorySink(channelCount: 2)
        try Runner(blockFrames: 1024, compensateLatency: true)
            .run(source: MemorySource(channels: channels, sampleRate: native), chain: try Self.chain(mode, rate: native, echoTailSeconds: echoTail), sink: sink)
        var out = try Resampler.resample([sink.channels[0]], from: native, to: info.sampleRate)[0]
        out = Array(out.prefix(mic.count)) + [Float](repeating: 0, count: max(0, mic.count - out.count))
        // Resampling back can overshoot a hair: the guard holds after it too.
        let guardStage = OutputLevelGuard(ceilingDBFS: -1)
        let result = AudioBuffer(channels: [out])
        try guardStage.prepare(ProcessSpec(sampleRate: info.sampleRate, maximumBlockFrames: out.count, channelCount: 1))
        var block = result.block(frameCount: out.count)
        guardStage.process(&block)
        try AudioFile.write(result, frameCount: out.count, to: output, sampleRate: info.sampleRate, sampleFormat: info.sampleFormat)
    }

    func captureLive() throws {
        let rate = ListeningChain.liveRate
        // The far end to play, at the live rate and under the output ceiling: what is played is
        // exactly what the echo canceller is told was played.
        var farSignal: [Float]?
        if let play {
            let recording = try MonoRecording(path: play)
            var samples = try Resampler.resample([recording.samples], from: recording.info.sampleRate, to: rate)[0]
            let limiter = ceiling.guardStage
            try limiter.prepare(ProcessSpec(sampleRate: rate, maximumBlockFrames: max(1, samples.count), channelCount: 1))
            samples.withUnsafeMutableBufferPointer { buffer in
                var block = AudioBlock(base: buffer.baseAddress!, channelCount: 1, frameCount: buffer.count, channelStride: buffer.count)
                limiter.process(&block)
            }
            farSignal = samples
        }
        let device = try inputDevice.find()
        let speaker = try farSignal.map { _ in try outputDevice.find() }
        let sink = try AudioEndpoints().openSink(output, sampleRate: rate, channelCount: 1, sampleFormat: nil)
        installInterruptHandler()
        // The loudspeaker opens first, so the first far-end block has somewhere to go, and steady:
        // a delay that jumps undoes what the echo canceller has learnt.
        let playback = try speaker.map { try DevicePlayback(device: $0, sampleRate: rate, channelCount: 1, steady: true) }
        defer { playback?.discard() }
        let capture = try DeviceCapture(device: device, sampleRate: rate, channelCount: 1, stop: interruptRequested, stallSeconds: 3)
        defer { capture.close() }
        let chain = try Self.chain(mode, rate: rate, echoTailSeconds: Self.liveEchoTailSeconds, echoPathSeconds: Self.liveEchoPathSeconds)
        let limit = seconds.map { Int($0 * rate) } ?? farSignal.map { $0.count + Int(0.5 * rate) }
        Terminal.note("Capturing from \(device.name) in \(mode.rawValue) mode"
            + (speaker.map { ", playing \(play ?? "") through \($0.name) as the far end" } ?? "")
            + (limit == nil ? "; Ctrl-C stops" : ""))
        let runner = Runner(blockFrames: 480, compensateLatency: false, maximumFrames: limit, stop: interruptRequested)
        if let playback, let farSignal {
            try runner.run(source: PlayedFarEndSource(capture: capture, playback: playback, far: farSignal), chain: chain, sink: FirstChannelSink(sink))
        } else {
            // No far end: the chain gets a second, empty channel.
            let paired = try ChannelMappedSource(capture, channelCount: 2)
            try runner.run(source: paired, chain: ProcessorChain([SilenceFarEnd(), chain]), sink: FirstChannelSink(sink))
        }
    }
}
