import EarshotCore
import EarshotDSP
import Foundation
import EarshotTestSupport
import Testing

struct MelCase: Decodable {
    let sr: Double, n_fft: Int, n_mels: Int, fmin: Double, fmax: Double?, htk: Bool, norm: String?
    let weights: [Double]
}

@Suite struct MelFilterbankTests {
    @Test func matchesLibrosa() throws {
        let cases = try fixture("mel", as: [MelCase].self)
        #expect(cases.contains { $0.htk } && cases.contains { !$0.htk })
        for c in cases {
            let bank = MelFilterbank(
                sampleRate: c.sr, fftSize: c.n_fft, melCount: c.n_mels, minimumHz: c.fmin, maximumHz: c.fmax,
                scale: c.htk ? .htk : .slaney, areaNormalized: c.norm == "slaney")
            #expect(bank.weights.count == c.weights.count)
            let worst = zip(bank.weights, c.weights).map { abs(Double($0) - $1) }.max()!
            #expect(worst <= 1e-5, "sr \(c.sr) n_fft \(c.n_fft) mels \(c.n_mels) htk \(c.htk): \(worst)")
        }
    }

    @Test func scalesRoundTrip() {
        for scale in [MelScale.htk, .slaney] {
            for hz in [0.0, 100, 999, 1000, 1001, 4000, 22050] {
                #expect(abs(scale.hz(fromMel: scale.mel(fromHz: hz)) - hz) < 1e-6 * max(1, hz))
            }
        }
    }

    @Test func toneEnergyLandsInTheRightFilter() {
        let bank = MelFilterbank(sampleRate: 16_000, fftSize: 512, melCount: 40)
        let fft = RealFFT(size: 512)
        _ = fft.transform(sine(frequencyHz: 2000, sampleRate: 16_000, count: 512))
        var power = [Float](repeating: 0, count: fft.binCount)
        for k in 0..<fft.binCount { power[k] = fft.power(bin: k) }
        var mel = [Float](repeating: 0, count: 40)
        power.withUnsafeBufferPointer { p in mel.withUnsafeMutableBufferPointer { bank.apply(power: p, into: $0) } }
        let strongest = mel.firstIndex(of: mel.max()!)!
        let center = MelScale.slaney.hz(fromMel: MelScale.slaney.mel(fromHz: 8000) * Double(strongest + 1) / 41)
        #expect(abs(center - 2000) < 250, "filter \(strongest) centred at \(center) Hz")
    }

    @Test func logPowerInDecibels() {
        let fft = RealFFT(size: 8)
        _ = fft.transform([1, 0, 0, 0, 0, 0, 0, 0])  // an impulse: every bin has power 1
        var out = [Float](repeating: -1, count: fft.binCount)
        out.withUnsafeMutableBufferPointer { LogPower.decibels(of: fft, into: $0) }
        #expect(out.allSatisfy { abs($0) < 1e-6 })
        _ = fft.transform([0, 0, 0, 0, 0, 0, 0, 0])
        out.withUnsafeMutableBufferPointer { LogPower.decibels(of: fft, into: $0, floor: 1e-10) }
        #expect(out.allSatisfy { abs($0 + 100) < 1e-4 })
    }
}

@Suite struct BiquadTests {
    let rate = 48_000.0

    /// Measures the gain a filter applies to a steady sine (after its transient dies away).
    func measuredGain(_ filter: BiquadFilter, atHz hz: Double) throws -> Double {
        var f = filter
        let input = sine(frequencyHz: hz, sampleRate: rate, count: 48_000, amplitude: 0.5)
        let output = try run(&f, over: input, blockSizes: [256], sampleRate: rate)
        return rms(output[24_000...]) / rms(input[24_000...])
    }

    @Test func cookbookDesignsHaveTheirDefiningGains() {
        let lp = BiquadCoefficients(.lowPass, frequencyHz: 1000, sampleRate: rate)
        #expect(abs(Decibels.fromAmplitude(lp.magnitude(atHz: 1000, sampleRate: rate)) + 3.0103) < 0.01)
        #expect(abs(lp.magnitude(atHz: 10, sampleRate: rate) - 1) < 1e-3)
        let hp = BiquadCoefficients(.highPass, frequencyHz: 1000, sampleRate: rate)
        #expect(abs(Decibels.fromAmplitude(hp.magnitude(atHz: 1000, sampleRate: rate)) + 3.0103) < 0.01)
        #expect(abs(hp.magnitude(atHz: 20_000, sampleRate: rate) - 1) < 1e-2)
        let bp = BiquadCoefficients(.bandPass, frequencyHz: 2000, q: 4, sampleRate: rate)
        #expect(abs(bp.magnitude(atHz: 2000, sampleRate: rate) - 1) < 1e-9)
        let notch = BiquadCoefficients(.notch, frequencyHz: 50, q: 10, sampleRate: rate)
        #expect(notch.magnitude(atHz: 50, sampleRate: rate) < 1e-6)
        let peak = BiquadCoefficients(.peaking(gainDB: 6), frequencyHz: 3000, q: 2, sampleRate: rate)
        #expect(abs(Decibels.fromAmplitude(peak.magnitude(atHz: 3000, sampleRate: rate)) - 6) < 1e-9)
        let low = BiquadCoefficients(.lowShelf(gainDB: -12), frequencyHz: 200, sampleRate: rate)
        #expect(abs(Decibels.fromAmplitude(low.magnitude(atHz: 10, sampleRate: rate)) + 12) < 0.1)
        #expect(abs(Decibels.fromAmplitude(low.magnitude(atHz: 200, sampleRate: rate)) + 6) < 0.01)
        let high = BiquadCoefficients(.highShelf(gainDB: 9), frequencyHz: 4000, sampleRate: rate)
        #expect(abs(Decibels.fromAmplitude(high.magnitude(atHz: 23_000, sampleRate: rate)) - 9) < 0.1)
        let ap = BiquadCoefficients(.allPass, frequencyHz: 700, sampleRate: rate)
        for hz in [50.0, 700, 5000] { #expect(abs(ap.magnitude(atHz: hz, sampleRate: rate) - 1) < 1e-9) }
    }

    @Test func filteringMatchesTheDesignedResponse() throws {
        let filters = [
            BiquadFilter(.lowPass, frequencyHz: 1000, sampleRate: rate),
            BiquadFilter(.peaking(gainDB: -9), frequencyHz: 500, q: 1.5, sampleRate: rate),
            BiquadFilter(.highPass, frequencyHz: 40, q: 0.5, sampleRate: rate),
        ]
        for filter in filters {
            for hz in [100.0, 500, 1000, 4000] {
                let expected = filter.magnitude(atHz: hz, sampleRate: rate)
                #expect(abs(try measuredGain(filter, atHz: hz) - expected) < 0.01 * max(expected, 0.01))
            }
        }
    }

    @Test func aWeightingFollowsIEC61672() throws {
        let filter = AWeighting.filter(sampleRate: rate)
        // Nominal A-weighting (dB) and the class 1 tolerances of IEC 61672-1.
        let points: [(hz: Double, db: Double, tolerance: Double)] = [
            (31.5, -39.4, 1.5), (100, -19.1, 1.0), (250, -8.6, 1.0), (1000, 0, 0.05),
            (2000, 1.2, 1.0), (4000, 1.0, 1.0), (8000, -1.1, 1.5), (10_000, -2.5, 2.0),
        ]
        for p in points {
            let designed = Decibels.fromAmplitude(filter.magnitude(atHz: p.hz, sampleRate: rate))
            #expect(abs(designed - p.db) <= p.tolerance, "\(p.hz) Hz: \(designed) dB")
            let measured = Decibels.fromAmplitude(try measuredGain(filter, atHz: p.hz))
            #expect(abs(measured - designed) < 0.1, "\(p.hz) Hz filtered: \(measured) dB")
        }
    }
}

@Suite struct LevelTests {
    @Test func fullScaleSineReadsAsSoxDoes() {
        let buffer = AudioBuffer(channels: [sine(frequencyHz: 1000, sampleRate: 48_000, count: 48_000)])
        var meter = LevelMeter(channelCount: 1)
        meter.measure(buffer.block())
        #expect(abs(Decibels.fromAmplitude(meter.peak)) < 0.01)
        #expect(abs(Decibels.fromAmplitude(meter.rms) + 3.0103) < 0.01)
    }

    @Test func accumulatesAcrossBlocksAndChannels() {
        let buffer = AudioBuffer(channels: [[Float](repeating: 0.5, count: 100), [Float](repeating: -0.25, count: 100)])
        var meter = LevelMeter(channelCount: 2)
        meter.measure(buffer.block().frames(from: 0, count: 30))
        meter.measure(buffer.block().frames(from: 30, count: 70))
        #expect(meter.frameCount == 100)
        #expect(meter.peak == 0.5 && meter.peak(channel: 1) == 0.25)
        #expect(abs(meter.rms(channel: 0) - 0.5) < 1e-9)
        #expect(abs(meter.rms - (0.5 * 0.5 / 2 + 0.25 * 0.25 / 2).squareRoot()) < 1e-9)
        #expect(LevelMeter(channelCount: 1).rms == 0)
    }

    @Test func outputGuardNeverExceedsTheCeiling() throws {
        var guardStage = OutputLevelGuard(ceilingDBFS: -12)
        var loud = noise(count: 20_000, seed: 11, amplitude: 1)
        loud[500] = .nan
        loud[501] = .infinity
        let output = try run(&guardStage, over: loud, blockSizes: [97])
        let ceiling = Float(Decibels.toAmplitude(-12))
        #expect(output.allSatisfy { $0.isFinite && abs($0) <= ceiling })
        // Quiet material passes untouched once the gain has recovered.
        var quietGuard = OutputLevelGuard(ceilingDBFS: -12)
        let quiet = noise(count: 4000, seed: 12, amplitude: 0.1)
        #expect(try run(&quietGuard, over: quiet, blockSizes: [64]) == quiet)
    }

    @Test func gainScales() throws {
        var gain = Gain(gainDB: -6.0206)
        let output = try run(&gain, over: [1, -1, 0.5], blockSizes: [2])
        #expect(zip(output, [0.5, -0.5, 0.25] as [Float]).allSatisfy { abs($0 - $1) < 1e-4 })
    }
}
