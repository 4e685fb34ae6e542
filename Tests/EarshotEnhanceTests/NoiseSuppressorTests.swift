import EarshotCore
import EarshotDSP
import EarshotEnhance
import EarshotIO
import Foundation
import Testing

/// White noise plus, from `speechStart`, a voiced "vowel": a 150 Hz harmonic series
/// amplitude-modulated at 4 Hz like syllables.
func scene(rate: Double, seconds: Double, noiseRMS: Float, speechStart: Double, seed: UInt64) -> (noise: [Float], speech: [Float]) {
    var random = SeededRandom(seed: seed)
    let count = Int(rate * seconds)
    let noise = (0..<count).map { _ in Float(random.nextGaussian()) * noiseRMS }
    let speech = (0..<count).map { n -> Float in
        let t = Double(n) / rate
        guard t >= speechStart else { return 0 }
        let syllables = 0.5 + 0.5 * sin(2 * Double.pi * 4 * t)
        let voice = (1...12).reduce(0.0) { $0 + sin(2 * Double.pi * 150 * Double($1) * t) / Double($1) }
        return Float(0.08 * syllables * voice)
    }
    return (noise, speech)
}

func rmsDB(_ x: ArraySlice<Float>) -> Double {
    10 * log10(x.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(x.count) + 1e-30)
}

func enhance(_ x: [Float], rate: Double, strength: Double = 22, block: Int = 160) throws -> (output: [Float], latency: Int) {
    var suppressor = try NoiseSuppressor(strengthDB: strength)
    let sink = MemorySink(channelCount: 1)
    let report = try Runner(blockFrames: block).run(source: MemorySource(channels: [x], sampleRate: rate), chain: &suppressor, sink: sink)
    return (sink.channels[0], report.latencySamples)
}

@Suite struct NoiseSuppressorTests {
    @Test(arguments: [16_000.0, 48_000.0])
    func delayIsUnderTenMilliseconds(rate: Double) throws {
        var suppressor = try NoiseSuppressor()
        try suppressor.prepare(ProcessSpec(sampleRate: rate, maximumBlockFrames: 480, channelCount: 1))
        let milliseconds = Double(suppressor.latencySamples) / rate * 1000
        #expect(milliseconds > 7 && milliseconds <= 10, "\(milliseconds) ms")
    }

    @Test func refusesOtherRatesAndStrengths() throws {
        var suppressor = try NoiseSuppressor()
        #expect(throws: EarshotError.self) { try suppressor.prepare(ProcessSpec(sampleRate: 44_100, maximumBlockFrames: 64, channelCount: 1)) }
        #expect(throws: EarshotError.self) { try NoiseSuppressor(strengthDB: -3) }
        #expect(throws: EarshotError.self) { try NoiseSuppressor(strengthDB: .nan) }
        #expect(NoiseSuppressor.nativeRate(for: 8000) == 16_000 && NoiseSuppressor.nativeRate(for: 44_100) == 48_000)
    }

    @Test(arguments: [16_000.0, 48_000.0])
    func removesNoiseAndKeepsSpeech(rate: Double) throws {
        let (noise, speech) = scene(rate: rate, seconds: 4, noiseRMS: 0.02, speechStart: 2, seed: 1)
        let (output, _) = try enhance(zip(noise, speech).map(+), rate: rate)
        // Noise alone (after training): attenuated by well over 15 dB.
        let quiet = Int(1.0 * rate)..<Int(1.9 * rate)
        let reduction = rmsDB(noise[quiet]) - rmsDB(output[quiet])
        #expect(reduction > 15, "noise reduced by \(reduction) dB")
        // Speech: the output's error against the clean speech is below the noise it had, and
        // the level is kept. (The gain is a ±4 ms filter for the sake of delay, which smooths it
        // over about 125 Hz: the harmonics of a voice this low lose a little level.)
        let talk = Int(2.5 * rate)..<Int(3.9 * rate)
        let residual = zip(output[talk], speech[talk]).map { $0 - $1 }
        let improvement = rmsDB(noise[talk]) - rmsDB(residual[...])
        #expect(improvement > 1.5, "SNR improved by \(improvement) dB")
        #expect(abs(rmsDB(output[talk]) - rmsDB(speech[talk])) < 3, "speech level kept within 3 dB")
    }

    @Test func tracksANoiseThatGrowsLouder() throws {
        let rate = 16_000.0
        var (noise, _) = scene(rate: rate, seconds: 5, noiseRMS: 0.01, speechStart: 99, seed: 2)
        for i in Int(2 * rate)..<noise.count { noise[i] *= 4 }  // +12 dB after 2 s, never trained on
        let (output, _) = try enhance(noise, rate: rate)
        let late = Int(4 * rate)..<Int(5 * rate)
        #expect(rmsDB(noise[late]) - rmsDB(output[late]) > 15, "the louder noise is learned within two seconds")
    }

    @Test func outputIsTheSameInAnyBlockSize() throws {
        let (noise, speech) = scene(rate: 16_000, seconds: 1.5, noiseRMS: 0.03, speechStart: 0.6, seed: 3)
        let input = zip(noise, speech).map(+)
        let reference = try enhance(input, rate: 16_000, block: 4096).output
        for block in [1, 7, 64, 480] {
            #expect(try enhance(input, rate: 16_000, block: block).output == reference, "blocks of \(block)")
        }
    }

    @Test func zeroStrengthChangesNothing() throws {
        let (noise, speech) = scene(rate: 16_000, seconds: 1, noiseRMS: 0.03, speechStart: 0.3, seed: 4)
        let input = zip(noise, speech).map(+)
        let (output, latency) = try enhance(input, rate: 16_000, strength: 0)
        #expect(latency == 126)
        #expect(zip(output, input).allSatisfy { abs($0 - $1) < 1e-4 })
    }
}
