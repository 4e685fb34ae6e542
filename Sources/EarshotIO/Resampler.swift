import CSoxr
import EarshotCore

/// Streaming sample-rate conversion with soxr (planar Float32 in and out).
///
/// soxr compensates its own filter delay: output frame 0 lines up with input frame 0, and
/// `flush` drains the tail, so a whole stream resamples to about inputFrames · ratio frames.
public final class Resampler {
    public enum Quality: Sendable {
        case high, veryHigh
        var recipe: UInt { self == .high ? 4 : 6 }  // SOXR_HQ (20-bit), SOXR_VHQ (28-bit)
    }

    public let inputRate: Double
    public let outputRate: Double
    public let channelCount: Int
    private let soxr: soxr_t
    private var inputPointers: [UnsafeRawPointer?]
    private var outputPointers: [UnsafeMutableRawPointer?]

    public init(inputRate: Double, outputRate: Double, channelCount: Int, quality: Quality = .veryHigh) throws {
        try EarshotError.validate(sampleRate: inputRate)
        try EarshotError.validate(sampleRate: outputRate)
        try EarshotError.validate(channelCount: channelCount)
        var io = soxr_io_spec(SOXR_FLOAT32_S, SOXR_FLOAT32_S)
        var qualitySpec = soxr_quality_spec(quality.recipe, 0)
        var runtime = soxr_runtime_spec(1)  // one thread: Earshot budgets one core
        var error: soxr_error_t?
        guard let soxr = soxr_create(inputRate, outputRate, UInt32(channelCount), &error, &io, &qualitySpec, &runtime),
            error == nil
        else {
            throw EarshotError.internalFailure("soxr: \(error.map { String(cString: $0) } ?? "cannot create resampler")")
        }
        self.soxr = soxr
        self.inputRate = inputRate
        self.outputRate = outputRate
        self.channelCount = channelCount
        inputPointers = [UnsafeRawPointer?](repeating: nil, count: channelCount)
        outputPointers = [UnsafeMutableRawPointer?](repeating: nil, count: channelCount)
    }

    deinit { soxr_delete(soxr) }

    public var ratio: Double { outputRate / inputRate }

    /// The most frames one call can produce from `inputFrames` (for sizing output blocks).
    public func outputCapacity(forInputFrames inputFrames: Int) -> Int {
        Int((Double(inputFrames) * ratio).rounded(.up)) + 64
    }

    /// Consumes all of `input` and writes what is ready into `output`; returns the frame count.
    /// `output` must hold `outputCapacity(forInputFrames: input.frameCount)` frames.
    public func process(_ input: AudioBlock, into output: AudioBlock) throws -> Int {
        precondition(input.channelCount == channelCount && output.channelCount == channelCount)
        for c in 0..<channelCount {
            inputPointers[c] = UnsafeRawPointer(input.channel(c).baseAddress!)
            outputPointers[c] = UnsafeMutableRawPointer(output.channel(c).baseAddress!)
        }
        return try run(inputFrames: input.frameCount, output: output, flushing: false)
    }

    /// After the last input: writes the remaining frames into `output`; returns how many.
    /// Call until it returns 0.
    public func flush(into output: AudioBlock) throws -> Int {
        for c in 0..<channelCount {
            outputPointers[c] = UnsafeMutableRawPointer(output.channel(c).baseAddress!)
        }
        return try run(inputFrames: 0, output: output, flushing: true)
    }

    private func run(inputFrames: Int, output: AudioBlock, flushing: Bool) throws -> Int {
        var consumed = 0, produced = 0
        let error: soxr_error_t? = inputPointers.withUnsafeBufferPointer { inputs in
            outputPointers.withUnsafeMutableBufferPointer { outputs in
                let input = flushing ? nil : UnsafeRawPointer(inputs.baseAddress!)
                return soxr_process(
                    soxr, input, inputFrames, &consumed,
                    UnsafeMutableRawPointer(outputs.baseAddress!), output.frameCount, &produced)
            }
        }
        if let error { throw EarshotError.internalFailure("soxr: \(String(cString: error))") }
        if !flushing && consumed != inputFrames {
            throw EarshotError.internalFailure("soxr consumed \(consumed) of \(inputFrames) frames: output block too small")
        }
        return produced
    }
}

/// A source at another sample rate: pulls from `upstream` and resamples with soxr.
public final class ResampledSource: AudioSource {
    public let upstream: AudioSource
    public let sampleRate: Double
    public var channelCount: Int { upstream.channelCount }
    private let resampler: Resampler
    private let inputBuffer: AudioBuffer
    private let pending: AudioBuffer
    private var pendingStart = 0, pendingCount = 0
    private var upstreamEnded = false, drained = false

    public init(_ upstream: AudioSource, sampleRate: Double, inputBlockFrames: Int = 4096) throws {
        self.upstream = upstream
        self.sampleRate = sampleRate
        resampler = try Resampler(inputRate: upstream.sampleRate, outputRate: sampleRate, channelCount: upstream.channelCount)
        inputBuffer = AudioBuffer(channelCount: upstream.channelCount, capacityFrames: inputBlockFrames)
        pending = AudioBuffer(
            channelCount: upstream.channelCount,
            capacityFrames: max(resampler.outputCapacity(forInputFrames: inputBlockFrames), 4096))
    }

    public func read(into block: AudioBlock) throws -> Int {
        var filled = 0
        while filled < block.frameCount {
            if pendingCount == 0 {
                if drained { break }
                try refill()
                continue
            }
            let count = min(pendingCount, block.frameCount - filled)
            block.frames(from: filled, count: count).copy(from: pending.block().frames(from: pendingStart, count: count))
            pendingStart += count
            pendingCount -= count
            filled += count
        }
        return filled
    }

    private func refill() throws {
        pendingStart = 0
        if !upstreamEnded {
            let got = try upstream.read(into: inputBuffer.block())
            if got > 0 {
                pendingCount = try resampler.process(inputBuffer.block(frameCount: got), into: pending.block())
                return
            }
            upstreamEnded = true
        }
        pendingCount = try resampler.flush(into: pending.block())
        if pendingCount == 0 { drained = true }
    }
}

/// A source with another channel count: mono is copied to every channel, many channels are
/// averaged to mono; other changes are refused (there is no one right downmix for them).
public final class ChannelMappedSource: AudioSource {
    public let upstream: AudioSource
    public let channelCount: Int
    public var sampleRate: Double { upstream.sampleRate }
    private var scratch: AudioBuffer

    public init(_ upstream: AudioSource, channelCount: Int) throws {
        try EarshotError.validate(channelCount: channelCount)
        let from = upstream.channelCount
        guard from == channelCount || from == 1 || channelCount == 1 else {
            throw EarshotError.unsupportedChannelMapping(from: from, to: channelCount)
        }
        self.upstream = upstream
        self.channelCount = channelCount
        scratch = AudioBuffer(channelCount: from, capacityFrames: 4096)
    }

    public func read(into block: AudioBlock) throws -> Int {
        let from = upstream.channelCount
        if scratch.capacityFrames < block.frameCount {
            scratch = AudioBuffer(channelCount: from, capacityFrames: block.frameCount)
        }
        let input = scratch.block(frameCount: block.frameCount)
        let got = try upstream.read(into: input)
        for c in 0..<channelCount {
            let out = block.channel(c)
            if from == channelCount {
                out.baseAddress!.update(from: input.channel(c).baseAddress!, count: got)
            } else if from == 1 {
                out.baseAddress!.update(from: input.channel(0).baseAddress!, count: got)
            } else {
                let scale = 1 / Float(from)
                for i in 0..<got {
                    var sum: Float = 0
                    for source in 0..<from { sum += input.channel(source)[i] }
                    out[i] = sum * scale
                }
            }
        }
        return got
    }
}

extension Resampler {
    /// Resamples whole channels held in memory (same soxr path as streaming).
    public static func resample(_ channels: [[Float]], from inputRate: Double, to outputRate: Double) throws -> [[Float]] {
        guard inputRate != outputRate else { return channels }
        let source = try ResampledSource(MemorySource(channels: channels, sampleRate: inputRate), sampleRate: outputRate)
        let sink = MemorySink(channelCount: channels.count)
        let chain = ProcessorChain()
        try Runner(blockFrames: 8192).run(source: source, chain: chain, sink: sink)
        return sink.channels
    }
}

/// A sink at another sample rate: resamples what it is given with soxr and passes it on.
public final class ResampledSink: AudioSink {
    public let downstream: AudioSink
    private let resampler: Resampler
    private var output: AudioBuffer

    public init(_ downstream: AudioSink, from inputRate: Double, to outputRate: Double, channelCount: Int) throws {
        self.downstream = downstream
        resampler = try Resampler(inputRate: inputRate, outputRate: outputRate, channelCount: channelCount)
        output = AudioBuffer(channelCount: channelCount, capacityFrames: 4096)
    }

    public func write(_ block: AudioBlock) throws {
        let needed = resampler.outputCapacity(forInputFrames: block.frameCount)
        if output.capacityFrames < needed { output = AudioBuffer(channelCount: block.channelCount, capacityFrames: needed) }
        let produced = try resampler.process(block, into: output.block())
        if produced > 0 { try downstream.write(output.block(frameCount: produced)) }
    }

    public func finish() throws {
        while true {
            let produced = try resampler.flush(into: output.block())
            if produced == 0 { break }
            try downstream.write(output.block(frameCount: produced))
        }
        try downstream.finish()
    }

    public func discard() { downstream.discard() }
}
