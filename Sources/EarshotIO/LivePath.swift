import Atomics
import CPortAudio
import EarshotCore
import Foundation

/// How much the devices may buffer: `low` for a hearing aid, `normal` for a busy machine.
public enum LiveLatency: String, CaseIterable, Sendable {
    case low, normal

    /// Frames per device callback at `sampleRate` (3 ms low, 10.7 ms normal at 48 kHz). 3 ms,
    /// not less: PulseAudio's null sinks keep time by adding up each chunk's length in whole
    /// microseconds, rounded down, so with 2.7 ms callbacks (130 frames, 2708.3 µs) a sink only
    /// Earshot played into ran 500 ppm fast, and the delay heard there grew by 0.3 ms a second;
    /// 144 frames are 3000 µs exactly.
    public func callbackFrames(sampleRate: Double) -> Int {
        let seconds = self == .low ? 0.003 : 0.0107
        return max(16, Int((seconds * sampleRate).rounded()))
    }

    /// What to keep in the ring between two streams: 1.5 ms absorbs the jitter between low-latency
    /// callbacks (measured through PulseAudio, no underrun unloaded); the larger buffers of
    /// `normal` arrive in lumps, and two callbacks in hand keep it from running dry.
    func inHandFrames(callbackFrames: Int, sampleRate: Double) -> Int {
        self == .low ? max(Int(sampleRate * 0.0015), callbackFrames / 2) : 2 * callbackFrames
    }

    /// The device latency to ask the host for: two callbacks' worth when low (the host rounds
    /// up to what it can do), the host's own safe default when normal.
    func suggestedSeconds(callbackFrames: Int, sampleRate: Double, hostHigh: Double) -> Double {
        self == .low ? 2 * Double(callbackFrames) / sampleRate : max(hostHigh, 2 * Double(callbackFrames) / sampleRate)
    }
}

/// Where the time between a sound reaching the microphone and leaving the headphones goes.
public struct LatencyBudget: Sendable {
    /// What the host reports for the input and output sides of the devices (their buffers).
    public var inputSeconds: Double
    public var outputSeconds: Double
    /// The ring between processing and playback.
    public var ringSeconds: Double
    /// The chain's own algorithmic delay.
    public var chainSeconds: Double
    /// How fast each device (or the sound server behind it) runs against this computer's
    /// clock, in parts per million: frames delivered or asked for since the start, against the
    /// time the callbacks say it is. No buffer reports this. Where the two differ, the playout
    /// repeats or drops to follow, and the delay measured in either device's own samples moves.
    public var inputClockPPM: Double
    public var outputClockPPM: Double

    public var totalSeconds: Double { inputSeconds + outputSeconds + ringSeconds + chainSeconds }

    public var description: String {
        String(format: "%.1f ms: the devices (or the sound server behind them) %.1f (input %.1f + output %.1f), ring %.1f, chain %.1f; "
               + "device clocks against this computer's: input %+.0f ppm, output %+.0f ppm",
               totalSeconds * 1000, (inputSeconds + outputSeconds) * 1000, inputSeconds * 1000, outputSeconds * 1000, ringSeconds * 1000,
               chainSeconds * 1000, inputClockPPM, outputClockPPM)
    }
}

/// What went wrong on the way, counted since the start.
public struct LiveCounters: Equatable, Sendable {
    /// Playback callbacks that found nothing to play, and host-reported output underflows.
    public var underruns: Int
    /// Input the host or the ring had to throw away.
    public var overruns: Int
    public var droppedFrames: Int
    public var repeatedFrames: Int
}

/// A device's clock against the computer's: the frames its callbacks carried before each one,
/// against the time since the first, as the callbacks were told it. The first `settleSeconds`
/// are left out (a stream starts with a burst of callbacks to fill its buffer, or a pause);
/// the callbacks' jitter of a millisecond or so averages out, and the figure is given from 5 s
/// of counting on. `count` runs on that callback's thread only; `ppm` may be read from any.
public final class DeviceClock: @unchecked Sendable {
    public var sampleRate = 48_000.0
    public static let settleSeconds = 2.0
    private var frames = 0
    private var opened = Double.nan
    private var start = Double.nan
    private let tenthsOfPPM = ManagedAtomic<Int>(0)

    public init() {}

    /// Called in a callback of `count` frames at stream time `now`.
    public func count(_ count: Int, at now: Double) {
        guard now.isFinite, now > 0 else { return }
        if opened.isNaN { opened = now }
        guard now - opened >= Self.settleSeconds else { return }
        if start.isNaN {
            start = now
        } else if now - start >= 5 {
            tenthsOfPPM.store(Int((Double(frames) / ((now - start) * sampleRate) - 1) * 1e7), ordering: .relaxed)
        }
        frames += count
    }

    public var ppm: Double { Double(tenthsOfPPM.load(ordering: .relaxed)) / 10 }
}

/// Everything a device callback touches; built and prepared before any device starts.
final class LiveCallbackContext: @unchecked Sendable {
    let processor: any AudioProcessor
    let inputChannels: Int
    /// Channels the processor works on: the input's, then copies of its last.
    let processChannels: Int
    let outputChannels: Int
    let maximumBlockFrames: Int
    let scratch: AudioBuffer
    let staging: UnsafeMutablePointer<Float>
    let ring: RingBuffer
    let playout: ElasticPlayout
    let overruns = ManagedAtomic<Int>(0)
    let hostUnderflows = ManagedAtomic<Int>(0)
    /// Latest host timings, in microseconds: how old the input was, how far ahead the output is.
    let inputMicroseconds = ManagedAtomic<Int>(0)
    let outputMicroseconds = ManagedAtomic<Int>(0)
    /// Each device's clock against the computer's, tenths of a ppm (see `LatencyBudget`).
    let inputClock = DeviceClock()
    let outputClock = DeviceClock()

    /// - Parameter inHandFrames: what the playout keeps in the ring between two streams.
    init(processor: any AudioProcessor, inputChannels: Int, processChannels: Int, outputChannels: Int, maximumBlockFrames: Int, sampleRate: Double,
         duplex: Bool, inHandFrames: Int) {
        self.processor = processor
        self.inputChannels = inputChannels
        self.processChannels = processChannels
        self.outputChannels = outputChannels
        self.maximumBlockFrames = maximumBlockFrames
        inputClock.sampleRate = sampleRate
        outputClock.sampleRate = sampleRate
        scratch = AudioBuffer(channelCount: processChannels, capacityFrames: maximumBlockFrames)
        staging = .allocate(capacity: maximumBlockFrames * outputChannels)
        staging.initialize(repeating: 0, count: maximumBlockFrames * outputChannels)
        ring = RingBuffer(minimumCapacity: Int(sampleRate) * outputChannels)  // a second: room for any backlog
        // In one duplex callback every frame captured is played at once: nothing to keep in hand.
        // Two streams tick apart, by up to a callback or two.
        let millisecond = Int(sampleRate / 1000)
        playout = ElasticPlayout(
            ring: ring, channelCount: outputChannels,
            targetFrames: duplex ? 0 : inHandFrames,
            toleranceFrames: duplex ? millisecond : inHandFrames,
            windowFrames: Int(sampleRate / 4), crossfadeFrames: 2 * millisecond,
            maximumCallbackFrames: 4 * maximumBlockFrames)
    }

    deinit { staging.deallocate() }

    /// Input → chain → ring, in slices of at most `maximumBlockFrames`. Real-time safe.
    func process(_ input: UnsafePointer<Float>, frames: Int) {
        var done = 0
        while done < frames {
            let count = min(maximumBlockFrames, frames - done)
            var block = scratch.block(frameCount: count)
            let source = input + done * inputChannels
            for c in 0..<processChannels {
                let channel = block.channel(c), from = min(c, inputChannels - 1)
                for i in 0..<count { channel[i] = source[i * inputChannels + from] }
            }
            processor.process(&block)
            for c in 0..<outputChannels {
                let channel = block.channel(min(c, processChannels - 1))
                for i in 0..<count { staging[i * outputChannels + c] = channel[i] }
            }
            let wanted = count * outputChannels
            if ring.write(UnsafeBufferPointer(start: staging, count: wanted)) < wanted {
                overruns.wrappingIncrement(ordering: .relaxed)
            }
            done += count
        }
    }

    func noteInput(_ time: PaStreamCallbackTimeInfo, flags: PaStreamCallbackFlags, frames: Int) {
        if flags & PaStreamCallbackFlags(paInputOverflow) != 0 { overruns.wrappingIncrement(ordering: .relaxed) }
        inputClock.count(frames, at: time.currentTime)
        let age = time.currentTime - time.inputBufferAdcTime
        if age.isFinite, age >= 0, age < 10 { inputMicroseconds.store(Int(age * 1e6), ordering: .relaxed) }
    }

    /// After the output callback has played `frames`.
    func noteOutput(_ time: PaStreamCallbackTimeInfo, flags: PaStreamCallbackFlags, frames: Int) {
        if flags & PaStreamCallbackFlags(paOutputUnderflow) != 0 { hostUnderflows.wrappingIncrement(ordering: .relaxed) }
        let ahead = time.outputBufferDacTime - time.currentTime
        if ahead.isFinite, ahead >= 0, ahead < 10 { outputMicroseconds.store(Int(ahead * 1e6), ordering: .relaxed) }
        outputClock.count(frames, at: time.currentTime)
    }
}

private func duplexCallback(
    input: UnsafeRawPointer?, output: UnsafeMutableRawPointer?, frames: UInt,
    time: UnsafePointer<PaStreamCallbackTimeInfo>?, flags: PaStreamCallbackFlags, userData: UnsafeMutableRawPointer?
) -> Int32 {
    guard let userData, let output else { return Int32(paContinue.rawValue) }
    Unmanaged<LiveCallbackContext>.fromOpaque(userData)._withUnsafeGuaranteedRef { context in
        if let input { context.process(input.assumingMemoryBound(to: Float.self), frames: Int(frames)) }
        context.playout.play(output.assumingMemoryBound(to: Float.self), frames: Int(frames))
        if let time {
            context.noteInput(time.pointee, flags: flags, frames: Int(frames))
            context.noteOutput(time.pointee, flags: flags, frames: Int(frames))
        }
    }
    return Int32(paContinue.rawValue)
}

private func inputCallback(
    input: UnsafeRawPointer?, output: UnsafeMutableRawPointer?, frames: UInt,
    time: UnsafePointer<PaStreamCallbackTimeInfo>?, flags: PaStreamCallbackFlags, userData: UnsafeMutableRawPointer?
) -> Int32 {
    guard let userData, let input else { return Int32(paContinue.rawValue) }
    Unmanaged<LiveCallbackContext>.fromOpaque(userData)._withUnsafeGuaranteedRef { context in
        if let time { context.noteInput(time.pointee, flags: flags, frames: Int(frames)) }
        context.process(input.assumingMemoryBound(to: Float.self), frames: Int(frames))
    }
    return Int32(paContinue.rawValue)
}

private func outputCallback(
    input: UnsafeRawPointer?, output: UnsafeMutableRawPointer?, frames: UInt,
    time: UnsafePointer<PaStreamCallbackTimeInfo>?, flags: PaStreamCallbackFlags, userData: UnsafeMutableRawPointer?
) -> Int32 {
    guard let userData, let output else { return Int32(paContinue.rawValue) }
    Unmanaged<LiveCallbackContext>.fromOpaque(userData)._withUnsafeGuaranteedRef { context in
        context.playout.play(output.assumingMemoryBound(to: Float.self), frames: Int(frames))
        if let time { context.noteOutput(time.pointee, flags: flags, frames: Int(frames)) }
    }
    return Int32(paContinue.rawValue)
}

/// A processor between an input and an output device, run inside the capture callback: no
/// thread of its own, no queue to fall behind on. One duplex stream where the host runs both
/// directions on one clock; otherwise two streams started back to back, with the elastic
/// playout holding the ring between them at its target whatever the two clocks do.
///
/// The processor is prepared before any device opens; the only state shared with the
/// callback is `LiveCallbackContext`.
public final class LiveAudioPath {
    public let sampleRate: Double
    public let callbackFrames: Int
    public let chainLatencySamples: Int
    /// One duplex stream (true) or two.
    public private(set) var isDuplex: Bool
    private var context: LiveCallbackContext
    private var streams: [UnsafeMutableRawPointer] = []

    /// - Parameter processChannels: the channels the processor works on (the input's by
    ///   default); those beyond the input's are copies of its last: one microphone, two ears.
    public init(
        processor: some AudioProcessor, input: AudioDeviceInfo, output: AudioDeviceInfo, sampleRate: Double,
        inputChannels: Int, processChannels: Int? = nil, outputChannels: Int, latency: LiveLatency
    ) throws {
        let processChannels = processChannels ?? inputChannels
        try AudioDevices.ensureInitialized()
        try EarshotError.validate(sampleRate: sampleRate)
        try EarshotError.validate(channelCount: inputChannels)
        try EarshotError.validate(channelCount: outputChannels)
        guard inputChannels <= input.inputChannels else {
            throw EarshotError.deviceFailure("'\(input.name)' has \(input.inputChannels) input channel(s), not \(inputChannels)")
        }
        guard outputChannels <= output.outputChannels else {
            throw EarshotError.deviceFailure("'\(output.name)' has \(output.outputChannels) output channel(s), not \(outputChannels)")
        }
        self.sampleRate = sampleRate
        callbackFrames = latency.callbackFrames(sampleRate: sampleRate)
        let processor = processor
        try EarshotError.validate(channelCount: processChannels)
        try processor.prepare(ProcessSpec(sampleRate: sampleRate, maximumBlockFrames: callbackFrames, channelCount: processChannels))
        // Run a quarter second of silence through once, so first-use costs (lazily allocated
        // library buffers, page faults) are paid here and not in the first device callbacks.
        let warmUp = AudioBuffer(channelCount: processChannels, capacityFrames: callbackFrames)
        for _ in 0..<max(1, Int(sampleRate / 4) / callbackFrames) {
            var block = warmUp.block()
            block.clear()
            processor.process(&block)
        }
        processor.reset()
        chainLatencySamples = processor.latencySamples

        let inputInfo = Pa_GetDeviceInfo(PaDeviceIndex(input.index))!.pointee
        let outputInfo = Pa_GetDeviceInfo(PaDeviceIndex(output.index))!.pointee
        inputParameters = PaStreamParameters(
            device: PaDeviceIndex(input.index), channelCount: Int32(inputChannels), sampleFormat: PaSampleFormat(paFloat32),
            suggestedLatency: latency.suggestedSeconds(callbackFrames: callbackFrames, sampleRate: sampleRate, hostHigh: inputInfo.defaultHighInputLatency),
            hostApiSpecificStreamInfo: nil)
        outputParameters = PaStreamParameters(
            device: PaDeviceIndex(output.index), channelCount: Int32(outputChannels), sampleFormat: PaSampleFormat(paFloat32),
            suggestedLatency: latency.suggestedSeconds(callbackFrames: callbackFrames, sampleRate: sampleRate, hostHigh: outputInfo.defaultHighOutputLatency),
            hostApiSpecificStreamInfo: nil)

        inputName = input.name
        outputName = output.name
        // ALSA (PulseAudio and PipeWire behind it among them) runs a duplex stream as two
        // devices that PortAudio ticks together: where they land relative to each other at the
        // start is luck (5 ms apart from one start to the next, measured), and after an underrun
        // they stay further apart for good, out of reach of the ring. Two streams keep each
        // device's own buffer at its fixed size, so all the slack is in the ring, where the
        // elastic playout holds it at its target.
        isDuplex = input.hostAPI != "ALSA" || output.hostAPI != "ALSA"
        let frames = callbackFrames, inHand = latency.inHandFrames(callbackFrames: frames, sampleRate: sampleRate)
        func makeContext(duplex: Bool) -> LiveCallbackContext {
            LiveCallbackContext(
                processor: processor, inputChannels: inputChannels, processChannels: processChannels, outputChannels: outputChannels,
                maximumBlockFrames: frames, sampleRate: sampleRate, duplex: duplex, inHandFrames: inHand)
        }
        context = makeContext(duplex: isDuplex)
        if isDuplex, let duplex = try? openStreams() {
            streams = duplex
        } else {
            context = makeContext(duplex: false)
            isDuplex = false
            streams = try openStreams()
        }
    }

    private var inputParameters: PaStreamParameters
    private var outputParameters: PaStreamParameters
    private var inputName = "", outputName = ""

    /// Opens one duplex stream, or an output and an input stream, with the same parameters every time.
    private func openStreams() throws -> [UnsafeMutableRawPointer] {
        let user = Unmanaged.passUnretained(context).toOpaque(), flags = PaStreamFlags(paClipOff)
        let frames = UInt(callbackFrames), rate = sampleRate
        func failure(_ status: PaError, _ name: String) -> EarshotError {
            .deviceFailure("cannot open '\(name)' at \(Int(rate)) Hz: \(String(cString: Pa_GetErrorText(status)))")
        }
        var stream: UnsafeMutableRawPointer?
        if isDuplex {
            let status = withStandardErrorMuted {
                Pa_OpenStream(&stream, &inputParameters, &outputParameters, rate, frames, flags, duplexCallback, user)
            }
            guard status == paNoError.rawValue, let stream else { throw failure(status, inputName) }
            return [stream]
        }
        var status = withStandardErrorMuted { Pa_OpenStream(&stream, nil, &outputParameters, rate, frames, flags, outputCallback, user) }
        guard status == paNoError.rawValue, let output = stream else { throw failure(status, outputName) }
        status = withStandardErrorMuted { Pa_OpenStream(&stream, &inputParameters, nil, rate, frames, flags, inputCallback, user) }
        guard status == paNoError.rawValue, let input = stream else {
            Pa_CloseStream(output)
            throw failure(status, inputName)
        }
        return [output, input]
    }

    deinit { stop() }

    /// Starts the device(s): playback first, so the first captured block has somewhere to go.
    public func start() throws {
        for stream in streams {
            let status = withStandardErrorMuted { Pa_StartStream(stream) }
            guard status == paNoError.rawValue else {
                stop()
                throw EarshotError.deviceFailure("cannot start the audio device: \(String(cString: Pa_GetErrorText(status)))")
            }
        }
    }

    /// Stops and closes the device(s); the processor's state is kept for reading.
    public func stop() {
        for stream in streams.reversed() {
            Pa_StopStream(stream)
            Pa_CloseStream(stream)
        }
        streams = []
    }

    /// What the host says its buffers hold: input and output latency of the stream(s).
    public var hostLatencySeconds: Double {
        streams.reduce(0) { total, stream in
            guard let info = Pa_GetStreamInfo(stream)?.pointee else { return total }
            return total + info.inputLatency + info.outputLatency
        }
    }

    /// Whether the host still runs the stream(s) (false after a device went away).
    public var isRunning: Bool {
        !streams.isEmpty && streams.allSatisfy { Pa_IsStreamActive($0) == 1 }
    }

    /// The delay now, from the host's timings, the ring and the chain.
    public var latency: LatencyBudget {
        LatencyBudget(
            inputSeconds: Double(context.inputMicroseconds.load(ordering: .relaxed)) / 1e6,
            outputSeconds: Double(context.outputMicroseconds.load(ordering: .relaxed)) / 1e6,
            ringSeconds: Double(context.playout.lastFill.load(ordering: .relaxed)) / sampleRate,
            chainSeconds: Double(chainLatencySamples) / sampleRate,
            inputClockPPM: context.inputClock.ppm, outputClockPPM: context.outputClock.ppm)
    }

    public var counters: LiveCounters {
        LiveCounters(
            underruns: context.playout.underruns.load(ordering: .relaxed) + context.hostUnderflows.load(ordering: .relaxed),
            overruns: context.overruns.load(ordering: .relaxed),
            droppedFrames: context.playout.droppedFrames.load(ordering: .relaxed),
            repeatedFrames: context.playout.repeatedFrames.load(ordering: .relaxed))
    }
}
