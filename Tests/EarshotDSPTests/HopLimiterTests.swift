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
        try expectKept(ProcessorContract(sampleRate: 16_000, input: [signal, signal.map { 0.5 * $0 }]) {
            SpectralProcessor(configuration: Self.configuration, stage: IdentitySpectralStage(), limitDBFS: -3, limiterSplitHz: [1000, nil])
        })
    }

    /// A 200 Hz tone under the ceiling, and 3 kHz bursts over it that take the sum 8 dB over.
    static func toneUnderBursts(rate: Double = 16_000) -> (tone: [Float], mixed: [Float]) {
        let count = Int(1.2 * rate)
        let tone = (0..<count).map { Float(0.5 * sin(2 * Double.pi * 200 * Double($0) / rate)) }
        let mixed = (0..<count).map { i -> Float in
            let t = Double(i) / rate
            let burst = (t.truncatingRemainder(dividingBy: 0.3) < 0.15) ? 1.8 * sin(2 * Double.pi * 3000 * t) : 0
            return tone[i] + Float(burst)
        }
        return (tone, mixed)
    }

    /// Split at 1 kHz, the limiter takes what it must from the bursts alone: the peaks stay under
    /// the ceiling with no flat tops, and the tone below the split comes out as it went in,
    /// where limiting the whole output pumps it down with every burst.
    @Test func twoBandsSpareTheLowerBand() throws {
        let (tone, mixed) = Self.toneUnderBursts()
        let ceiling = Float(pow(10, -1.0 / 20))
        func lowerBandError(_ split: [Double?]) throws -> (error: Double, peak: Float, flat: Int) {
            var limited = SpectralProcessor(configuration: Self.configuration, stage: IdentitySpectralStage(), limitDBFS: -1, limiterSplitHz: split)
            let output = try run(&limited, over: mixed, blockSizes: [100])
            let delay = limited.latencySamples
            // The tone's share of the output: its projection on the tone, per 10 ms.
            var worst = 0.0
            for start in stride(from: 1600, to: tone.count - delay - 160, by: 160) {
                var dot = 0.0, energy = 0.0
                for i in start..<(start + 160) {
                    dot += Double(output[i + delay]) * Double(tone[i])
                    energy += Double(tone[i]) * Double(tone[i])
                }
                worst = max(worst, abs(20 * log10(max(dot / energy, 1e-6))))
            }
            return (worst, output.map(abs).max()!, flatRuns(output, above: 0.5 * ceiling))
        }
        let split = try lowerBandError([1000]), whole = try lowerBandError([])
        #expect(split.peak <= ceiling * 1.0001 && whole.peak <= ceiling * 1.0001, "peaks \(split.peak), \(whole.peak) over \(ceiling)")
        #expect(split.flat == 0)
        #expect(split.error < 0.5, "split: the tone's level moves by at most 0.5 dB, not \(split.error) dB")
        #expect(whole.error > 3, "whole: the tone is pumped by the bursts (\(whole.error) dB)")
    }
}
