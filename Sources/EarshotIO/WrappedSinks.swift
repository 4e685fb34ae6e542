import EarshotCore

/// A sink that passes every block through a zero-delay processor (the output guard) first.
public final class GuardedSink: AudioSink {
    public let downstream: AudioSink
    private let processor: any AudioProcessor

    public init(_ downstream: AudioSink, guard processor: any AudioProcessor, sampleRate: Double, channelCount: Int) throws {
        precondition(processor.latencySamples == 0)
        try processor.prepare(ProcessSpec(sampleRate: sampleRate, maximumBlockFrames: 1 << 20, channelCount: channelCount))
        self.downstream = downstream
        self.processor = processor
    }

    public func write(_ block: AudioBlock) throws {
        var block = block
        processor.process(&block)
        try downstream.write(block)
    }

    public func finish() throws { try downstream.finish() }
    public func discard() { downstream.discard() }
}

/// Writes channel 0 of two-channel blocks.
public final class FirstChannelSink: AudioSink {
    public let downstream: AudioSink
    public init(_ downstream: AudioSink) { self.downstream = downstream }
    public func write(_ block: AudioBlock) throws {
        try downstream.write(AudioBlock(base: block.channel(0).baseAddress!, channelCount: 1, frameCount: block.frameCount, channelStride: block.frameCount))
    }
    public func finish() throws { try downstream.finish() }
    public func discard() { downstream.discard() }
}
