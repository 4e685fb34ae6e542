import EarshotAlerts
import EarshotAudiometry
import EarshotCore
import EarshotDSP
import EarshotEnhance
import EarshotHearingAid
import EarshotTestSupport
import Foundation
import Testing

/// The compressor that realises a fitting, alone and inside the listening chain.
@Suite struct AmplificationTests {
    static let rate = 16_000.0
    /// S3 (sloping, severe at high frequencies) in the left ear, normal hearing in the right.
    static let fitting = try! Prescription.fit(
        try! PureToneAudiogram(left: [250: 30, 500: 35, 750: 47.5, 1000: 60, 1500: 70, 2000: 75, 3000: 80, 4000: 80, 6000: 85],
                               right: [250: 0, 500: 0, 1000: 0, 2000: 0, 4000: 0, 8000: 0]),
        maximumOutputDBSPL: 100)

    /// dB SPL of a stretch (a full-scale sine is 100 dB SPL).
    static func levelDBSPL(_ x: ArraySlice<Float>) -> Double {
        10 * log10(x.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(x.count) / 0.5) + 100
    }

    static func tone(hz: Double, levelsDBSPL: [(seconds: Double, level: Double)]) -> [Float] {
        var samples: [Float] = []
        for (seconds, level) in levelsDBSPL {
            let amplitude = pow(10, (level - 100) / 20)
            let start = samples.count
            samples += (0..<Int(seconds * rate)).map { Float(amplitude * sin(2 * Double.pi * hz * Double(start + $0) / rate)) }
        }
        return samples
    }

    /// Prepares `processor` and runs `channels` through it in blocks of `blockFrames`.
    static func run(_ processor: any AudioProcessor, _ channels: [[Float]], sampleRate: Double = rate, blockFrames: Int = 256) throws -> [[Float]] {
        try processor.prepare(ProcessSpec(sampleRate: sampleRate, maximumBlockFrames: blockFrames, channelCount: channels.count))
        let buffer = AudioBuffer(channels: channels)
        var done = 0
        while done < channels[0].count {
            let count = min(blockFrames, channels[0].count - done)
            var block = buffer.block().frames(from: done, count: count)
            processor.process(&block)
            done += count
        }
        return (0..<channels.count).map { Array(buffer.channel($0)) }
    }

    /// Steady tones get the gain of the fitting's input/output rule, band by band, from below
    /// the knee to beyond loud speech, and never more than the band's maximum output. (Within
    /// 1.5 dB: a tone's main lobe spills a little into the next bands, so its own band reads it
    /// slightly low; speech, being broadband, gains as much from its neighbours as it loses.)
    @Test(arguments: [1000.0, 2000.0, 4000.0])
    func steadyTonesGetTheRulesGain(hz: Double) throws {
        let compression = try Self.fitting.compression()
        let band = try #require(compression.channels[0].first { $0.centreHz == hz })
        for level in [35.0, 50, 60, 70, 80, 90] {
            let input = Self.tone(hz: hz, levelsDBSPL: [(1.0, level)])
            let output = try Self.run(try WideDynamicRangeCompressor(compression), [input])[0]
            let steady = input.count / 2..<input.count
            let gain = Self.levelDBSPL(output[steady]) - Self.levelDBSPL(input[steady])
            let expected = band.gainDB(atLevelDBSPL: level)
            #expect(abs(gain - expected) < 1.5, "\(Int(hz)) Hz at \(Int(level)) dB SPL: gain \(gain) dB, rule \(expected) dB")
            #expect(Self.levelDBSPL(output[steady]) <= band.maximumOutputDBSPL + 1.5)
        }
    }

    /// The limiter takes what it must first from where the loss is moderately severe or worse:
    /// above 866 Hz for S3 (47.5 dB HL at 750 Hz, 60 at 1 kHz); a loss as severe from the lowest
    /// band up (N4) and a normal ear are limited as a whole.
    @Test func theLimiterSplitsBelowTheSevereLoss() throws {
        let split = try Self.fitting.compression().limiterSplitHz
        #expect(split.count == 2 && abs((split[0] ?? 0) - (750.0 * 1000).squareRoot()) < 1e-9 && split[1] == nil, "\(split)")
        let n4 = try #require(Self.steepest["N4"])
        let flat = try Prescription.fit(try PureToneAudiogram(left: n4, right: n4), maximumOutputDBSPL: 110)
        #expect(try flat.compression().limiterSplitHz == [nil, nil])
    }

    /// Level steps: the gain falls within an attack time and rises back over the release time
    /// (the level detector's times, without the output limiter, which the loud step engages).
    @Test func attackIsFastAndReleaseIsSlow() throws {
        var compression = try Self.fitting.compression()
        compression.limitDBFS = nil
        let input = Self.tone(hz: 2000, levelsDBSPL: [(0.5, 50), (0.5, 85), (2.5, 50)])
        let output = try Self.run(try WideDynamicRangeCompressor(compression), [input])[0]
        func gain(at seconds: Double) -> Double {
            let window = Int(seconds * Self.rate)..<Int((seconds + 0.008) * Self.rate)
            return Self.levelDBSPL(output[window]) - Self.levelDBSPL(input[window])
        }
        let soft = gain(at: 0.4), loud = gain(at: 0.9)
        #expect(soft - loud > 8, "compression between 50 and 85 dB SPL: \(soft) vs \(loud) dB")
        #expect(abs(gain(at: 0.53) - loud) < 3, "attack: within 3 dB 30 ms after the step up")
        #expect(soft - gain(at: 1.03) > 3, "release: still well below the soft gain 30 ms after the step down")
        #expect(abs(gain(at: 3.4) - soft) < 1, "release: back within 1 dB after 2.4 s")
    }

    /// Each ear gets its own fitting: the normal right ear's output is its input.
    @Test func eachEarGetsItsOwnGains() throws {
        let compression = try Self.fitting.compression()
        var random = SeededRandom(seed: 5)
        let input = (0..<Int(Self.rate)).map { _ in Float(0.02 * random.nextGaussian()) }
        let output = try Self.run(try WideDynamicRangeCompressor(compression), [input, input])
        let steady = 4000..<input.count
        let left = Self.levelDBSPL(output[0][steady]) - Self.levelDBSPL(input[steady])
        let right = Self.levelDBSPL(output[1][steady]) - Self.levelDBSPL(input[steady])
        #expect(left > 15, "the S3 ear is amplified: \(left) dB")
        #expect(abs(right) < 0.3, "the normal ear is not: \(right) dB")
    }

    @Test(arguments: [16_000.0, 48_000.0])
    func compressorKeepsTheContract(rate: Double) throws {
        let compression = try Self.fitting.compression()
        var contract = ProcessorContract(sampleRate: rate, channelCount: 2) { try WideDynamicRangeCompressor(compression) }
        contract.latencyTolerance = 2
        try expectKept(contract)
    }

    /// The whole chain, detector → suppressor → amplification → guard: the contract, no added
    /// delay over the suppressor alone, and no sample over the ceiling even for a loud input.
    @Test func listeningChainAmplifiesWithinTheSameDelay() throws {
        let network = try AlertNetwork.bundled()
        let compression = try Self.fitting.compression()
        let scene = ListeningContractTests.scene(rate: 48_000)[0]
        let make = { try ListeningChain(detector: network, amplification: compression, maximumOutputDBFS: -6) }
        var contract = ProcessorContract(sampleRate: 48_000, input: [scene, scene]) { try make() }
        contract.latencyTolerance = 2
        try expectKept(contract)

        let chain = try make(), plain = try ListeningChain(detector: network, maximumOutputDBFS: -6)
        let loud = scene.map { $0 * 3 }
        let output = try Self.run(chain, [loud, loud], sampleRate: 48_000, blockFrames: 512)
        try plain.prepare(ProcessSpec(sampleRate: 48_000, maximumBlockFrames: 512, channelCount: 1))
        #expect(chain.latencySamples == plain.latencySamples && chain.latencySamples <= 480)
        let ceiling = Float(pow(10, -6.0 / 20))
        #expect(output.allSatisfy { $0.allSatisfy { abs($0) <= ceiling } })
        // Before the alarm (each ear is limited on its own, so during it both sit near the ceiling).
        let noise = 4_800..<26_400
        let left = Self.levelDBSPL(output[0][noise]), right = Self.levelDBSPL(output[1][noise])
        #expect(left > right + 6, "the S3 ear hears more: \(left) vs \(right) dB SPL")
    }

    /// Bisgaard's steepest standard losses: N4 (flat-sloping, 55–80 dB HL) and S3 (steep, 30–85).
    static let steepest: [String: [Double: Double]] = [
        "N4": [250: 55, 375: 55, 500: 55, 750: 55, 1000: 55, 1500: 60, 2000: 65, 3000: 70, 4000: 75, 6000: 80],
        "S3": [250: 30, 375: 30, 500: 35, 750: 47.5, 1000: 60, 1500: 70, 2000: 75, 3000: 80, 4000: 80, 6000: 85],
    ]

    /// Loud voiced speech, as a synthesiser makes it: syllables of a glottal pulse train (a
    /// 1/f harmonic series, gliding pitch) through two vowel formants, with sharp onsets and
    /// fricatives between them, at `levelDBSPL` (a full-scale sine is 100 dB SPL).
    static func speech(levelDBSPL: Double, seconds: Double, rate: Double, seed: UInt64) -> [Float] {
        var random = SeededRandom(seed: seed)
        let count = Int(seconds * rate)
        var x = [Float](repeating: 0, count: count)
        let vowels: [(Double, Double)] = [(730, 1090), (270, 2290), (530, 1840), (570, 840), (660, 1720)]
        var start = 0, syllable = 0
        while start < count {
            let length = Int((0.12 + 0.1 * Double.random(in: 0..<1, using: &random)) * rate)
            let (f1, f2) = vowels[syllable % vowels.count]
            let pitch = 110 + 60 * Double.random(in: 0..<1, using: &random)
            for i in 0..<min(length, count - start) {
                let t = Double(i) / rate
                let envelope = min(1, t / 0.005) * min(1, Double(length - i) / (0.02 * rate))
                let f0 = pitch * (1 - 0.3 * t)
                var sample = 0.0
                var harmonic = 1
                while Double(harmonic) * f0 < min(7000, rate / 2 - 500) {
                    let f = Double(harmonic) * f0
                    let formants = 1 / (1 + pow((f - f1) / 90, 2)) + 0.6 / (1 + pow((f - f2) / 120, 2)) + 0.02
                    sample += formants / Double(harmonic) * sin(2 * Double.pi * f * t)
                    harmonic += 1
                }
                x[start + i] = Float(envelope * sample)
            }
            let fricative = min(Int(0.06 * rate), count - start - length)
            var last = 0.0
            for i in 0..<max(0, fricative) {
                let white = random.nextGaussian()
                x[start + length + i] = Float(0.3 * (white - 0.9 * last))  // tilted towards the high frequencies
                last = white
            }
            start += length + max(0, fricative) + Int(0.03 * rate)
            syllable += 1
        }
        let level = Self.levelDBSPL(x[...])
        let scale = Float(pow(10, (levelDBSPL - level) / 20))
        return x.map { $0 * scale }
    }

    /// The steepest losses with loud speech and a maximum output above what an uncalibrated
    /// playback can play (110 dB SPL; full scale is 100): without the limiter the waveform
    /// would go over full scale; with it, amplify and the listening chain hold every sample
    /// under the ceiling, the guard after them never has to pin one, and no run of samples sits
    /// at one level near the top.
    @Test(arguments: ["N4", "S3"])
    func loudSpeechIsLimitedNeverClipped(listener: String) throws {
        let thresholds = try #require(Self.steepest[listener])
        let fit = try Prescription.fit(try PureToneAudiogram(left: thresholds, right: thresholds), maximumOutputDBSPL: 110)
        #expect(try fit.unreachableOutputDB() == 10)
        #expect(try fit.unreachableOutputNote(calibration: nil, limitDBFS: 0)?.contains("10.0 dB above") == true)
        #expect(try fit.ceilingDBFS() == 0)
        try expectLimitedNeverClipped(fit, calibration: nil, listener: listener, seed: 3)
    }

    /// With a calibrated playback that can play more than the maximum output (a full-scale sine is
    /// 106 dB SPL in every band; the maximum is 100), the ceiling lies under full scale (−6 dBFS)
    /// and the limiter holds loud speech under it the same way.
    @Test(arguments: ["N4", "S3"])
    func aCalibratedCeilingIsLimitedNeverClipped(listener: String) throws {
        let thresholds = try #require(Self.steepest[listener])
        let fit = try Prescription.fit(try PureToneAudiogram(left: thresholds, right: thresholds), maximumOutputDBSPL: 100)
        let table = Dictionary(uniqueKeysWithValues: [250.0, 500, 1000, 2000, 4000, 8000].map { ($0, 106.0) })
        let profile = CalibrationProfile(name: "loud", transducer: .insert, fullScaleSPL: [.left: table, .right: table])
        #expect(abs(try fit.ceilingDBFS(calibration: profile) + 6) < 1e-9)
        #expect(try fit.unreachableOutputDB(calibration: profile) == 0)
        try expectLimitedNeverClipped(fit, calibration: profile, listener: listener, seed: 5)
    }

    /// Speech at 80 and 90 dB SPL through `fit`: the compressor without its limiter goes over
    /// the ceiling (so the checks can fail); amplify's chain and the listening chain keep every
    /// sample under it, loud, without the guard pinning one and without flat runs near it.
    private func expectLimitedNeverClipped(_ fit: Fitting, calibration: CalibrationProfile?, listener: String, seed: UInt64) throws {
        let ceilingDBFS = try fit.ceilingDBFS(calibration: calibration)
        let ceiling = Float(pow(10, ceilingDBFS / 20))
        let compression = try fit.compression(calibration: calibration)
        for level in [80.0, 90.0] {
            let input = Self.speech(levelDBSPL: level, seconds: 2, rate: Self.rate, seed: seed)
            var unlimited = compression
            unlimited.limitDBFS = nil
            let raw = try Self.run(try WideDynamicRangeCompressor(unlimited), [input, input])[0]
            #expect(raw.map(abs).max()! > ceiling, "\(listener) at \(Int(level)) dB SPL: the compressor alone goes over the ceiling")

            let amplify = ProcessorChain([try WideDynamicRangeCompressor(compression), OutputLevelGuard(ceilingDBFS: ceilingDBFS)])
            let chain = try ListeningChain(detector: nil, amplification: compression, maximumOutputDBFS: ceilingDBFS)
            for (name, processor) in [("amplify", amplify as any AudioProcessor), ("listening chain", chain)] {
                for ear in try Self.run(processor, [input, input]) {
                    let peak = ear.map(abs).max()!
                    #expect(peak <= ceiling, "\(name), \(listener) at \(Int(level)) dB SPL: peak \(peak) over the ceiling \(ceiling)")
                    #expect(peak < ceiling * Float(pow(10, -0.05 / 20)), "\(name), \(listener) at \(Int(level)) dB SPL: the guard had to pin a sample (peak \(peak))")
                    #expect(peak > 0.5 * ceiling, "\(name), \(listener) at \(Int(level)) dB SPL: loud, not turned down (peak \(peak))")
                    #expect(flatRuns(ear, above: 0.5 * ceiling) == 0, "\(name), \(listener) at \(Int(level)) dB SPL: flat runs near the ceiling")
                }
            }
        }
    }

    /// With amplification, noise reduction works per band and slowly (`BandNoiseReduction`):
    /// speech in quiet comes out as amplification alone makes it, and a loud steady noise is
    /// turned down, by at most 6 dB (less after the compressor, which gives back part of it).
    @Test func noiseReductionUnderAmplificationLeavesQuietSpeechAlone() throws {
        let n2: [Double: Double] = [250: 20, 500: 20, 750: 22.5, 1000: 25, 1500: 30, 2000: 35, 3000: 40, 4000: 45, 6000: 50]
        let fit = try Prescription.fit(try PureToneAudiogram(left: n2, right: n2), maximumOutputDBSPL: 110)
        let speech = Self.speech(levelDBSPL: 65, seconds: 3, rate: Self.rate, seed: 8)
        func both(_ input: [Float]) throws -> (reduced: [Float], amplified: [Float]) {
            let reduced = try Self.run(try ListeningChain(detector: nil, amplification: try fit.compression(), maximumOutputDBFS: 0), [input, input])[0]
            let amplified = try Self.run(try ListeningChain(enhance: false, detector: nil, amplification: try fit.compression(), maximumOutputDBFS: 0), [input, input])[0]
            return (reduced, amplified)
        }
        let quiet = try both(speech)
        let difference = zip(quiet.reduced, quiet.amplified).map { $0 - $1 }
        let residual = Self.levelDBSPL(difference[...]) - Self.levelDBSPL(quiet.amplified[...])
        #expect(residual < -30, "speech in quiet is left as amplification makes it: the difference is \(residual) dB")
        // Nor is a vowel held from the first sample, as when a stream starts mid-word: the
        // bands' first frames, which their floors start from, hold nothing but speech.
        let held = (0..<Int(0.8 * Self.rate)).map { i in
            (1...20).reduce(Float(0)) { sum, h in sum + sinf(2 * .pi * 150 * Float(h) * Float(i) / Float(Self.rate)) / Float(h) }
        }
        let heldLevel = Self.levelDBSPL(held[...])
        let midWord = try both(held.map { $0 * Float(pow(10, (65 - heldLevel) / 20)) } + speech)
        let start = 0..<Int(0.5 * Self.rate)
        let onset = Self.levelDBSPL(zip(midWord.reduced[start], midWord.amplified[start]).map { $0 - $1 }[...]) - Self.levelDBSPL(midWord.amplified[start])
        #expect(onset < -30, "the first half second is left as amplification makes it: the difference is \(onset) dB")

        var random = SeededRandom(seed: 9)
        let noise = (0..<(2 * speech.count)).map { _ in Float(random.nextGaussian()) }
        let noiseLevel = Self.levelDBSPL(noise[...])
        let steady = noise.map { $0 * Float(pow(10, (70 - noiseLevel) / 20)) }
        let mixed = zip(steady, [Float](repeating: 0, count: speech.count) + speech).map { $0 + $1 }
        let noisy = try both(mixed)
        let noiseOnly = Int(2 * Self.rate)..<speech.count
        let reduction = Self.levelDBSPL(noisy.amplified[noiseOnly]) - Self.levelDBSPL(noisy.reduced[noiseOnly])
        #expect(reduction > 2 && reduction < 6.5, "a steady 70 dB SPL noise is turned down by at most 6 dB: \(reduction) dB")
    }
}
