import EarshotCore
import Testing

/// Adds a constant and reports a fixed latency: enough to see the chain's bookkeeping.
final class Offset: AudioProcessor {
    let amount: Float
    let latencySamples: Int
    var prepared: ProcessSpec?
    var resets = 0
    init(amount: Float, latencySamples: Int) {
        self.amount = amount
        self.latencySamples = latencySamples
    }
    func prepare(_ spec: ProcessSpec) throws { prepared = spec }
    func process(_ block: inout AudioBlock) {
        for c in 0..<block.channelCount { for i in block.channel(c).indices { block.channel(c)[i] += amount } }
    }
    func reset() { resets += 1 }
}

@Suite struct ProcessorChainTests {
    @Test func runsInOrderAndSumsLatency() throws {
        let chain = ProcessorChain([Offset(amount: 1, latencySamples: 3), Offset(amount: 2, latencySamples: 4)])
        let spec = ProcessSpec(sampleRate: 16_000, maximumBlockFrames: 8, channelCount: 2)
        try chain.prepare(spec)
        #expect(chain.latencySamples == 7)
        let buffer = AudioBuffer(channelCount: 2, capacityFrames: 8)
        var block = buffer.block(frameCount: 5)
        chain.process(&block)
        #expect(buffer.toArrays() == [[3, 3, 3, 3, 3, 0, 0, 0], [3, 3, 3, 3, 3, 0, 0, 0]])
        chain.reset()
        #expect(chain.processors.allSatisfy { ($0 as! Offset).prepared == spec && ($0 as! Offset).resets == 1 })
    }

    @Test func blocksAreViewsThatSliceWithoutCopying() {
        let buffer = AudioBuffer(channels: [[1, 2, 3, 4], [5, 6, 7, 8]])
        let middle = buffer.block().frames(from: 1, count: 2)
        #expect(Array(middle.channel(1)) == [6, 7])
        middle.clear()
        #expect(buffer.toArrays() == [[1, 0, 0, 4], [5, 0, 0, 8]])
        let other = AudioBuffer(channels: [[9, 9], [8, 8]])
        middle.copy(from: other.block())
        #expect(buffer.toArrays() == [[1, 9, 9, 4], [5, 8, 8, 8]])
    }

    @Test func errorsSayWhatIsWrongAndWhoseFaultItIs() {
        #expect(throws: EarshotError.invalidSampleRate(0)) { try EarshotError.validate(sampleRate: 0) }
        #expect(throws: EarshotError.invalidSampleRate(10_000_000)) { try EarshotError.validate(sampleRate: 10_000_000) }
        #expect(throws: EarshotError.self) { try EarshotError.validate(sampleRate: .nan) }
        #expect(throws: Never.self) { try EarshotError.validate(sampleRate: 44_100) }
        #expect(throws: EarshotError.invalidChannelCount(0)) { try EarshotError.validate(channelCount: 0) }
        #expect(EarshotError.invalidSampleRate(0).description.contains("0 Hz"))
        #expect(EarshotError.emptyAudio(path: "x.wav").isBadInput)
        #expect(!EarshotError.internalFailure("boom").isBadInput)
    }
}
