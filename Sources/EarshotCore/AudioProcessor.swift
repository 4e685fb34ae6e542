/// What a processor is told before it runs: allocate everything it needs for this.
public struct ProcessSpec: Equatable, Sendable {
    public var sampleRate: Double
    public var maximumBlockFrames: Int
    public var channelCount: Int

    public init(sampleRate: Double, maximumBlockFrames: Int, channelCount: Int) {
        self.sampleRate = sampleRate
        self.maximumBlockFrames = maximumBlockFrames
        self.channelCount = channelCount
    }
}

/// The contract every stage of an Earshot chain keeps.
///
/// `prepare` may allocate and may refuse a spec it cannot serve; `process` must be real-time
/// safe — no allocation, lock, I/O or logging — and must give the same output whatever the
/// block sizes, so a chain behaves identically on a file and on a live stream.
///
/// Processors are references: a processor is one stream's running state (filter memories,
/// overlap-add tails, a network's recurrent state, buffers behind pointers), and a copy that
/// silently shared or silently forked that state would be a bug either way. To run twice,
/// make two. `EarshotTestSupport.ProcessorContract` proves every processor keeps the contract.
public protocol AudioProcessor: AnyObject {
    func prepare(_ spec: ProcessSpec) throws
    /// Transforms `block` in place. Its frame count is at most `spec.maximumBlockFrames`.
    func process(_ block: inout AudioBlock)
    /// Forgets all signal history, as if freshly prepared.
    func reset()
    /// The honest algorithmic delay: output sample n reflects input sample n - latencySamples.
    var latencySamples: Int { get }
}

/// Processors run one after the other; the chain's latency is the sum of theirs.
public final class ProcessorChain: AudioProcessor {
    public private(set) var processors: [any AudioProcessor]

    public init(_ processors: [any AudioProcessor] = []) {
        self.processors = processors
    }

    public func append(_ processor: any AudioProcessor) {
        processors.append(processor)
    }

    public func prepare(_ spec: ProcessSpec) throws {
        for index in processors.indices { try processors[index].prepare(spec) }
    }

    public func process(_ block: inout AudioBlock) {
        for index in processors.indices { processors[index].process(&block) }
    }

    public func reset() {
        for index in processors.indices { processors[index].reset() }
    }

    public var latencySamples: Int {
        processors.reduce(0) { $0 + $1.latencySamples }
    }
}

extension AudioProcessor {
    /// Runs the processor offline over whole signals of one length, as one block (it is prepared
    /// for that length first).
    public func apply(to channels: inout [[Float]], sampleRate: Double) throws {
        let frames = channels.first?.count ?? 0
        guard frames > 0 else { return }
        let buffer = AudioBuffer(channels: channels)
        try prepare(ProcessSpec(sampleRate: sampleRate, maximumBlockFrames: frames, channelCount: channels.count))
        var block = buffer.block(frameCount: frames)
        process(&block)
        channels = buffer.toArrays(frameCount: frames)
    }
}
