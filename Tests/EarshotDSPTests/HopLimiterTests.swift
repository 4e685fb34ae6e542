import EarshotCore
import EarshotDSP
import EarshotTestSupport
import Foundation
import Testing

/// The limiter inside the low-delay STFT: under the ceiling always, no flat tops, transparent
/// below it, and within the processor contract.
@Suite struct HopLimiterTests {
    static let configuration = STFTConfiguration.lowDelay(frameSize: 512, hop: 64)

    /// Tone bursts that step from quiet to 12 dB over full scale, 40 Hz to 5 kHz (a low tone's
    /// peaks last many samples: the hardest case for a clip-free limit).
    static func bursts(rate: Double = 16_000) -> [Float] {
        var signal: [Float] = []
        for (hz, amplitude) in [(40.0, 4.0), (250, 2.0), (1000, 0.3), (1000, 4.0), (5000, 3.0)] {
            let count = Int(0.3 * rate)
            signal += (0..<count).map { i in
                let onset = min(1, Double(i) / (0.002 * rate))
                return Float(amplitude * onset * sin(2 * Double.pi * hz * Double(i) / rate))
            }
        }
        return signal
    }

    @Test func holdsPeaksUnderTheCeilingWithoutFlatTops() throws {
        let signal = Self.bursts()
        let ceiling = Float(pow(10, -1.0 / 20))
        var limited = SpectralProcessor(configuration: Self.configuration, stage: IdentitySpectralStage(), limitDBFS: -1)
        let output = try run(&limited, over: signal, blockSizes: [160])
        let peak = output.map(abs).max()!
        #expect(peak <= ceiling * 1.0001, "peak \(peak) over the ceiling \(ceiling)")
        #expect(peak > 0.95 * ceiling, "the loud bursts are limited, not turned down: peak \(peak)")
        #expect(flatRuns(output, above: 0.5 * ceiling) == 0)
        // What a guard alone does to the same input: flat tops.
        var guarded = ProcessorChain([SpectralProcessor(configuration: Self.configuration, stage: IdentitySpectralStage()), OutputLevelGuard(ceilingDBFS: -1)])
        #expect(flatRuns(try run(&guarded, over: signal, blockSizes: [160]), above: 0.5 * ceiling) > 0)
    }

    @Test func leavesWhatIsUnderTheCeilingAlone() throws {
        let signal = noise(count: 8000, seed: 11, amplitude: 0.2)
        var limited = SpectralProcessor(configuration: Self.configuration, stage: IdentitySpectralStage(), limitDBFS: -1)
        let output = try run(&limited, over: signal, blockSizes: [64])
        let delay = limited.latencySamples
        let worst = (0..<(signal.count - delay)).map { abs(output[$0 + delay] - signal[$0]) }.max()!
        #expect(worst < 1e-5, "a signal under the ceiling is reconstructed as without the limiter: error \(worst)")
    }

    @Test func keepsTheContract() throws {
        let signal = Self.bursts()
        try expectKept(ProcessorContract(sampleRate: 16_000, input: [signal, signal.map { 0.5 * $0 }]) {
            SpectralProcessor(configuration: Self.configuration, stage: IdentitySpectralStage(), limitDBFS: -3)
        })
    }
}
