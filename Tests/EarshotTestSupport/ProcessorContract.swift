import CAllocationCounter
import EarshotCore

/// The contract every `AudioProcessor` keeps, checked the same way for all of them:
///
/// - **Block size.** The output is the same for blocks of 1, 7, 64, 480 and 4096 frames, and
///   for blocks of seeded random sizes, as for blocks of 64.
/// - **Reset.** After other audio and `reset()`, it gives what a fresh instance gives.
/// - **Latency.** The delay measured on a noise burst (the lag of the input–output
///   cross-correlation's peak) equals `latencySamples`.
/// - **Real time.** `process` makes no heap allocation after `prepare` (where the allocator
///   can be watched: glibc).
public struct ProcessorContract {
    public static let blockSizes = [1, 7, 64, 480, 4096]

    public let sampleRate: Double
    public let channelCount: Int
    /// The audio the checks run on: one array per channel.
    public let input: [[Float]]
    /// How far outputs may differ; 0 asks for bit-identical output.
    public var tolerance: Float = 0
    /// How far the measured delay may be from the reported one, in samples: 0 for processors
    /// that only delay or keep time; a few for filters whose impulse response peaks late.
    public var latencyTolerance = 0
    private let make: () throws -> any AudioProcessor

    /// - Parameter input: nil for seeded noise with a tone and silence in it, `seconds` long.
    public init(sampleRate: Double, channelCount: Int = 1, seconds: Double = 1.2, input: [[Float]]? = nil,
                make: @escaping () throws -> any AudioProcessor) {
        self.sampleRate = sampleRate
        self.channelCount = channelCount
        self.make = make
        self.input = input ?? (0..<channelCount).map { c in
            let count = Int(seconds * sampleRate)
            let hiss = noise(count: count, seed: 7 + UInt64(c), amplitude: 0.05)
            let tone = sine(frequencyHz: 440 * Double(c + 1), sampleRate: sampleRate, count: count, amplitude: 0.2)
            return (0..<count).map { i in
                let quiet = i > count / 3 && i < count / 2  // a stretch of silence
                return quiet ? 0 : hiss[i] + tone[i] * Float(i % 9000 < 6000 ? 1 : 0)
            }
        }
    }

    /// Every way the processor breaks the contract, in words; empty when it keeps it.
    public func violations() throws -> [String] {
        var found: [String] = []
        let reference = try run(try make(), blocks: .fixed(64))
        for size in Self.blockSizes {
            let output = try run(try make(), blocks: .fixed(size))
            if let difference = Self.difference(output, reference, tolerance: tolerance) {
                found.append("blocks of \(size) differ from blocks of 64: \(difference)")
            }
        }
        let irregular = try run(try make(), blocks: .random(seed: 3))
        if let difference = Self.difference(irregular, reference, tolerance: tolerance) {
            found.append("blocks of random sizes differ from blocks of 64: \(difference)")
        }

        let reused = try make()
        _ = try run(reused, blocks: .fixed(480), signal: input.map { Array($0.reversed()) })
        reused.reset()
        let afterReset = try run(reused, blocks: .fixed(480), prepare: false)
        if let difference = Self.difference(afterReset, reference, tolerance: tolerance) {
            found.append("after reset() it differs from a fresh instance: \(difference)")
        }

        let (reported, measured) = try latency()
        if abs(reported - measured) > latencyTolerance {
            found.append("reports \(reported) samples of latency but delays by \(measured)")
        }

        if let allocations = try allocationsAfterPrepare(), allocations > 0 {
            found.append("process allocated \(allocations) times after prepare")
        }
        return found
    }

    private enum Blocks {
        case fixed(Int)
        case random(seed: UInt64)
    }

    private func run(_ processor: any AudioProcessor, blocks: Blocks, signal: [[Float]]? = nil, prepare: Bool = true) throws -> [[Float]] {
        let signal = signal ?? input
        let largest: Int
        switch blocks {
        case .fixed(let size): largest = size
        case .random: largest = 4096
        }
        if prepare {
            try processor.prepare(ProcessSpec(sampleRate: sampleRate, maximumBlockFrames: largest, channelCount: channelCount))
        }
        let buffer = AudioBuffer(channelCount: channelCount, capacityFrames: largest)
        var output = signal.map { [Float](repeating: 0, count: $0.count) }
        var rng = SeededRandom(seed: { if case .random(let seed) = blocks { seed } else { 0 } }())
        var position = 0
        while position < signal[0].count {
            let wanted: Int
            switch blocks {
            case .fixed(let size): wanted = size
            case .random: wanted = Int.random(in: 1...largest, using: &rng)
            }
            let count = min(wanted, signal[0].count - position)
            var block = buffer.block(frameCount: count)
            for c in 0..<channelCount {
                signal[c].withUnsafeBufferPointer { block.channel(c).baseAddress!.update(from: $0.baseAddress! + position, count: count) }
            }
            processor.process(&block)
            for c in 0..<channelCount {
                for i in 0..<count { output[c][position + i] = block.channel(c)[i] }
            }
            position += count
        }
        return output
    }

    /// The reported latency and the lag at which a noise burst's cross-correlation with the
    /// output peaks.
    private func latency() throws -> (reported: Int, measured: Int) {
        let processor = try make()
        let count = Int(sampleRate)  // a second: silence, 0.2 s of noise, silence
        let start = count / 4, length = count / 5
        let burst = noise(count: length, seed: 11, amplitude: 0.3)
        var channel = [Float](repeating: 0, count: count)
        for i in 0..<length { channel[start + i] = burst[i] }
        let output = try run(processor, blocks: .fixed(64), signal: Array(repeating: channel, count: channelCount))
        let reported = processor.latencySamples
        var best = 0, bestValue = -Double.infinity
        for lag in 0...min(count - start - length, reported + 2048) {
            var sum = 0.0
            for i in 0..<length { sum += Double(burst[i]) * Double(output[0][start + lag + i]) }
            if sum > bestValue { (best, bestValue) = (lag, sum) }
        }
        return (reported, best)
    }

    /// nil where the allocator cannot be watched.
    private func allocationsAfterPrepare() throws -> Int? {
        guard AllocationCounter.works else { return nil }
        let processor = try make()
        try processor.prepare(ProcessSpec(sampleRate: sampleRate, maximumBlockFrames: 480, channelCount: channelCount))
        let buffer = AudioBuffer(channelCount: channelCount, capacityFrames: 480)
        var position = 0
        allocation_counter_start()
        while position + 480 <= input[0].count {
            var block = buffer.block(frameCount: 480)
            for c in 0..<channelCount {
                input[c].withUnsafeBufferPointer { block.channel(c).baseAddress!.update(from: $0.baseAddress! + position, count: 480) }
            }
            processor.process(&block)
            position += 480
        }
        return allocation_counter_stop()
    }

    /// Where two outputs first differ by more than `tolerance`, in words; nil if nowhere.
    static func difference(_ a: [[Float]], _ b: [[Float]], tolerance: Float) -> String? {
        for c in a.indices {
            for i in a[c].indices where !(abs(a[c][i] - b[c][i]) <= tolerance) {
                return "channel \(c), sample \(i): \(a[c][i]) vs \(b[c][i])"
            }
        }
        return nil
    }
}

/// Heap allocations on the calling thread, watched by interposing the allocator.
public enum AllocationCounter {
    /// The counter must see an allocation it is shown, or its zeros would mean nothing.
    public static let works: Bool = {
        guard allocation_counter_supported() != 0 else { return false }
        allocation_counter_start()
        let array = [Int](repeating: 1, count: Int.random(in: 100...200))
        let seen = allocation_counter_stop()
        return seen > 0 && array.count > 0
    }()
}

import Testing

/// Records one issue per clause the processor breaks, in words.
public func expectKept(_ contract: ProcessorContract, sourceLocation: SourceLocation = #_sourceLocation) throws {
    for violation in try contract.violations() {
        Issue.record(Comment(rawValue: violation), sourceLocation: sourceLocation)
    }
}
