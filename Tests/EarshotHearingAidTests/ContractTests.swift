import EarshotCore
import EarshotSynthesis
import EarshotHearingAid
import EarshotAlerts
import EarshotEnhance
import EarshotTestSupport
import Testing

/// The alert detector and the whole listening chain through the shared processor contract, on
/// audio with an alert in it, so the gate opens part-way through a block.
@Suite struct ListeningContractTests {
    /// Noise, then a smoke alarm at 0.6 s, at `rate`.
    static func scene(rate: Double) -> [[Float]] {
        let count = Int(2.5 * rate)
        var samples = noise(count: count, seed: 21, amplitude: 0.02)
        let alarm = AlertSynthesis.random(.smokeAlarm, seed: 4, sampleRate: rate, maximumSeconds: 1.8).samples
        let start = Int(0.6 * rate)
        for i in alarm.indices where start + i < count { samples[start + i] += 0.3 * alarm[i] }
        return [samples]
    }

    @Test(arguments: [16_000.0, 48_000.0])
    func detectorKeepsTheContract(rate: Double) throws {
        let network = try AlertNetwork.bundled()
        let contract = ProcessorContract(sampleRate: rate, input: Self.scene(rate: rate)) { AlertDetector(network: network) }
        try expectKept(contract)
    }

    @Test func listeningChainKeepsTheContract() throws {
        let network = try AlertNetwork.bundled()
        let input = Self.scene(rate: 48_000)
        // The alarm must open the gate, or this would not test the slicing at all.
        let chain = try ListeningChain(detector: network, maximumOutputDBFS: -6)
        try chain.prepare(ProcessSpec(sampleRate: 48_000, maximumBlockFrames: input[0].count, channelCount: 1))
        let buffer = AudioBuffer(channels: input)
        var block = buffer.block()
        chain.process(&block)
        var opened = false
        chain.detector?.takeChanges { if case .began = $0 { opened = true } }
        #expect(opened)

        let contract = ProcessorContract(sampleRate: 48_000, input: input) { try ListeningChain(detector: network, maximumOutputDBFS: -6) }
        try expectKept(contract)
    }
}
