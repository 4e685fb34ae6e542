import Atomics
import EarshotCore

/// What a run did.
public struct RunReport: Equatable, Sendable {
    public var inputFrames: Int
    public var outputFrames: Int
    public var latencySamples: Int
}

/// Drives a chain from a source to a sink in blocks: the one loop behind files, pipes and
/// devices alike.
public struct Runner {
    public var blockFrames: Int
    /// Drop the chain's first `latencySamples` output frames and flush as many at the end, so
    /// output frame n lines up with input frame n and the output is as long as the input.
    /// Right for files and pipes; a live device cannot wait for the future, so it keeps the delay.
    public var compensateLatency: Bool
    /// Stop after this many input frames (a recording's length); nil reads to the end.
    public var maximumFrames: Int?
    /// Set from any thread to end the run after the current block.
    public var stop: ManagedAtomic<Bool>?
    /// Called after each block with the input frames consumed so far (for progress bars).
    public var progress: ((Int) -> Void)?

    public init(
        blockFrames: Int = 512, compensateLatency: Bool = true, maximumFrames: Int? = nil,
        stop: ManagedAtomic<Bool>? = nil, progress: ((Int) -> Void)? = nil
    ) {
        precondition(blockFrames >= 1)
        self.blockFrames = blockFrames
        self.compensateLatency = compensateLatency
        self.maximumFrames = maximumFrames
        self.stop = stop
        self.progress = progress
    }

    /// Runs `chain` over everything `source` gives and hands the result to `sink`. On any
    /// failure the sink is discarded (no half-written file) and the error rethrown.
    @discardableResult
    public func run(source: AudioSource, chain: some AudioProcessor, sink: AudioSink) throws -> RunReport {
        do {
            let report = try process(source: source, chain: chain, sink: sink)
            try sink.finish()
            return report
        } catch {
            sink.discard()
            throw error
        }
    }

    private func process(source: AudioSource, chain: some AudioProcessor, sink: AudioSink) throws -> RunReport {
        let channels = source.channelCount
        try chain.prepare(ProcessSpec(sampleRate: source.sampleRate, maximumBlockFrames: blockFrames, channelCount: channels))
        let latency = chain.latencySamples
        let buffer = AudioBuffer(channelCount: channels, capacityFrames: blockFrames)
        var toSkip = compensateLatency ? latency : 0
        var inputFrames = 0, outputFrames = 0

        func emit(_ block: AudioBlock) throws {
            let skipped = min(toSkip, block.frameCount)
            toSkip -= skipped
            guard block.frameCount > skipped else { return }
            try sink.write(block.frames(from: skipped, count: block.frameCount - skipped))
            outputFrames += block.frameCount - skipped
        }

        while stop?.load(ordering: .relaxed) != true {
            let wanted = min(blockFrames, maximumFrames.map { $0 - inputFrames } ?? blockFrames)
            guard wanted > 0 else { break }
            let got = try source.read(into: buffer.block(frameCount: wanted))
            guard got > 0 else { break }
            var block = buffer.block(frameCount: got)
            chain.process(&block)
            try emit(block)
            inputFrames += got
            progress?(inputFrames)
        }
        // Push silence through to release the delayed tail of the input.
        var tail = compensateLatency ? latency : 0
        while tail > 0 {
            let count = min(tail, blockFrames)
            var block = buffer.block(frameCount: count)
            block.clear()
            chain.process(&block)
            try emit(block)
            tail -= count
        }
        return RunReport(inputFrames: inputFrames, outputFrames: outputFrames, latencySamples: latency)
    }
}

/// A sink that keeps everything in memory (tests, analysis, small files).
public final class MemorySink: AudioSink {
    public private(set) var channels: [[Float]]
    public private(set) var finished = false

    public init(channelCount: Int) {
        channels = Array(repeating: [], count: channelCount)
    }

    public func write(_ block: AudioBlock) throws {
        for c in 0..<block.channelCount { channels[c].append(contentsOf: block.channel(c)) }
    }

    public func finish() throws { finished = true }
}

/// A sink for chains whose product is not audio (detection, measurement).
public final class DiscardingSink: AudioSink {
    public init() {}
    public func write(_ block: AudioBlock) throws {}
    public func finish() throws {}
}

/// A source that plays back channels held in memory.
public final class MemorySource: AudioSource {
    public let sampleRate: Double
    public let channels: [[Float]]
    public var channelCount: Int { channels.count }
    private var position = 0

    public init(channels: [[Float]], sampleRate: Double) {
        precondition(!channels.isEmpty && channels.allSatisfy { $0.count == channels[0].count })
        self.channels = channels
        self.sampleRate = sampleRate
    }

    public func read(into block: AudioBlock) throws -> Int {
        let count = min(block.frameCount, channels[0].count - position)
        for c in 0..<channelCount {
            channels[c].withUnsafeBufferPointer {
                block.channel(c).baseAddress!.update(from: $0.baseAddress! + position, count: count)
            }
        }
        position += count
        return count
    }
}
