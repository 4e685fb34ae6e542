import EarshotCore
import EarshotDSP
import EarshotRoom
import Foundation
import Testing

@Suite struct SweepTests {
    let rate = 16_000.0

    /// A known system: a 37-sample delay, a +6 dB bell at 1 kHz and a 5 kHz low-pass.
    func linearSystem() -> BiquadFilter {
        BiquadFilter(sections: [
            BiquadCoefficients(.peaking(gainDB: 6), frequencyHz: 1000, q: 1.4, sampleRate: rate),
            BiquadCoefficients(.lowPass, frequencyHz: 5000, sampleRate: rate),
        ])
    }

    func apply(_ filter: BiquadFilter, delay: Int, to x: [Float]) throws -> [Float] {
        let f = filter
        try f.prepare(ProcessSpec(sampleRate: rate, maximumBlockFrames: x.count + delay, channelCount: 1))
        let buffer = AudioBuffer(channels: [[Float](repeating: 0, count: delay) + x])
        var block = buffer.block()
        f.process(&block)
        return Array(buffer.channel(0))
    }

    /// What both sides are compared through: the band the sweep covers, with margin.
    func band(_ x: [Float]) -> [Float] {
        BiquadFilter(sections: [
            BiquadCoefficients(.highPass, frequencyHz: 120, sampleRate: rate), BiquadCoefficients(.highPass, frequencyHz: 120, sampleRate: rate),
            BiquadCoefficients(.lowPass, frequencyHz: 5500, sampleRate: rate), BiquadCoefficients(.lowPass, frequencyHz: 5500, sampleRate: rate),
        ]).zeroPhase(x, sampleRate: rate)
    }

    func errorDB(_ measured: [Float], _ truth: [Float]) -> Double {
        var error = 0.0, energy = 0.0
        for i in truth.indices {
            error += Double(measured[i] - truth[i]) * Double(measured[i] - truth[i])
            energy += Double(truth[i]) * Double(truth[i])
        }
        return 10 * log10(error / energy)
    }

    @Test func recoversAKnownFilterBelowMinus40dB() throws {
        let sweep = try ExponentialSweep(startHz: 50, endHz: 7000, durationSeconds: 2, sampleRate: rate)
        let played = sweep.signal + [Float](repeating: 0, count: Int(rate))
        let recording = try apply(linearSystem(), delay: 37, to: played)
        let measured = try sweep.deconvolve(recording, responseSeconds: 0.5).linear
        var impulse = [Float](repeating: 0, count: measured.count - 37)
        impulse[0] = 1
        let truth = try apply(linearSystem(), delay: 37, to: impulse)
        let error = errorDB(band(measured), band(truth))
        #expect(error < -40, "in-band error \(error) dB")
    }

    @Test func separatesHarmonicDistortion() throws {
        let sweep = try ExponentialSweep(startHz: 50, endHz: 7000, durationSeconds: 3, sampleRate: rate)
        let played = sweep.signal + [Float](repeating: 0, count: Int(rate / 2))
        // A memoryless distortion ahead of the filter: y = x + 0.1·x³. For a sine of amplitude
        // A, x³ holds A³/4 at three times the frequency: 0.1 · 0.5³ / 4 over 0.5 is −44 dB.
        // There is no second harmonic.
        let distorted = played.map { $0 + 0.1 * $0 * $0 * $0 }
        let recording = try apply(linearSystem(), delay: 10, to: distorted)
        let responses = try sweep.deconvolve(recording, responseSeconds: 0.25, harmonicCount: 3)
        #expect(responses.harmonics.count == 3)
        let energy = { (x: [Float]) in x.reduce(0.0) { $0 + Double($1) * Double($1) } }
        let linear = energy(responses.linear)
        let second = 10 * log10(energy(responses.harmonics[0]) / linear)
        let third = 10 * log10(energy(responses.harmonics[1]) / linear)
        #expect(abs(third + 44) < 3, "third harmonic at \(third) dB")
        #expect(second < third - 10, "no second harmonic: \(second) dB")
        // The cubic term also raises the fundamental by 0.1 · ¾ · 0.5² ≈ 1.9 %; the linear
        // response is otherwise the filter's.
        var impulse = [Float](repeating: 0, count: responses.linear.count - 10)
        impulse[0] = 1
        let truth = try apply(linearSystem(), delay: 10, to: impulse).map { $0 * 1.01875 }
        #expect(errorDB(band(responses.linear), band(truth)) < -30)
    }

    /// Every channel of a recording is measured, to one length, with where the first channel's
    /// direct sound arrives.
    @Test func measuresEveryChannel() throws {
        let sweep = try ExponentialSweep(startHz: 50, endHz: 7000, durationSeconds: 1, sampleRate: rate)
        let played = sweep.signal + [Float](repeating: 0, count: Int(rate / 2))
        let near = try apply(linearSystem(), delay: 80, to: played), far = try apply(linearSystem(), delay: 400, to: played)
        let measured = try sweep.measure([near, far], responseSeconds: 0.2)
        #expect(measured.linear.count == 2 && measured.linear[0].count == measured.linear[1].count)
        #expect(measured.harmonics.count == 4 && measured.harmonics.allSatisfy { $0.count == 2 && $0[0].count == $0[1].count })
        #expect(abs(measured.directSoundSeconds - 80 / rate) < 3 / rate, "\(measured.directSoundSeconds * rate) samples")
    }

    @Test func refusesWhatCannotBeMeasured() {
        #expect(throws: RoomError.sweepRange(startHz: 20, endHz: 9000, nyquistHz: 8000)) { try ExponentialSweep(startHz: 20, endHz: 9000, durationSeconds: 1, sampleRate: 16_000) }
        #expect(throws: RoomError.sweepDuration(seconds: 0)) { try ExponentialSweep(durationSeconds: 0, sampleRate: 16_000) }
        #expect(throws: RoomError.recordingShorterThanSweep(recordingFrames: 100, sweepFrames: 16_000)) {
            try ExponentialSweep(durationSeconds: 1, sampleRate: 16_000).deconvolve([Float](repeating: 0, count: 100))
        }
    }
}
