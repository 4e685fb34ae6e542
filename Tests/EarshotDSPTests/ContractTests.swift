import EarshotCore
import EarshotDSP
import EarshotTestSupport
import Testing

/// The DSP building blocks through the shared processor contract.
@Suite struct DSPContractTests {
    @Test(arguments: [16_000.0, 48_000.0])
    func gainAndOutputGuard(rate: Double) throws {
        try expectKept(ProcessorContract(sampleRate: rate, channelCount: 2) { Gain(gainDB: -3) })
        // A ceiling the test signal crosses, so the guard is working, not idling.
        try expectKept(ProcessorContract(sampleRate: rate, channelCount: 2) { OutputLevelGuard(ceilingDBFS: -20) })
    }

    @Test func biquadCascade() throws {
        let contract = ProcessorContract(sampleRate: 48_000, channelCount: 2) {
            BiquadFilter(sections: [
                BiquadCoefficients(.highPass, frequencyHz: 100, sampleRate: 48_000),
                BiquadCoefficients(.peaking(gainDB: 6), frequencyHz: 2_000, q: 1, sampleRate: 48_000),
            ])
        }
        try expectKept(contract)
    }

    @Test func partitionedConvolver() throws {
        // A response whose energy arrives 300 samples late: the convolver adds no delay of its
        // own, so the measured delay is the response's.
        var response = noise(count: 2_000, seed: 5, amplitude: 0.01)
        response[300] = 1
        var contract = ProcessorContract(sampleRate: 16_000) { try PartitionedConvolver(response: [response], partitionSize: 128) }
        contract.latencyTolerance = 300
        try expectKept(contract)
    }

    @Test func lowDelaySpectralProcessorAndChain() throws {
        let configuration = STFTConfiguration.lowDelay(frameSize: 512, hop: 64)
        try expectKept(ProcessorContract(sampleRate: 16_000, channelCount: 2) {
            SpectralProcessor(configuration: configuration, stage: IdentitySpectralStage())
        })
        try expectKept(ProcessorContract(sampleRate: 16_000) {
            ProcessorChain([Gain(gainDB: 6), SpectralProcessor(configuration: configuration, stage: IdentitySpectralStage()), OutputLevelGuard(ceilingDBFS: -6)])
        })
    }

    /// The harness itself must catch a processor that breaks the contract.
    @Test func harnessCatchesBrokenProcessors() throws {
        let violations = try ProcessorContract(sampleRate: 16_000) { BlockSizeDependent() }.violations()
        #expect(violations.contains { $0.hasPrefix("blocks of 1 differ") })
        #expect(violations.contains { $0.hasPrefix("after reset()") })
        #expect(violations.contains { $0.contains("reports 0 samples of latency but delays by 5") })
        if AllocationCounter.works { #expect(violations.contains { $0.hasPrefix("process allocated") }) }
    }
}

/// Breaks every clause: a gain per block, state that reset forgets to clear, an unreported
/// delay, an allocation per block.
private final class BlockSizeDependent: AudioProcessor {
    private var blocks = 0
    private var delay = [Float](repeating: 0, count: 5)
    var latencySamples: Int { 0 }
    func prepare(_ spec: ProcessSpec) throws {}
    func reset() {}
    func process(_ block: inout AudioBlock) {
        blocks += 1
        let scratch = [Float](repeating: Float(blocks % 2), count: block.frameCount + 1)
        let samples = block.channel(0)
        for i in samples.indices {
            delay.append(samples[i])
            samples[i] = delay.removeFirst() * (0.5 + 0.5 * scratch[i])
        }
        for c in 1..<max(1, block.channelCount) { block.channel(c).update(repeating: 0) }
    }
}
