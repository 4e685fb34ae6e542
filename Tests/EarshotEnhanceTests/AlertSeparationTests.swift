import EarshotCore
import EarshotDSP
@testable import EarshotEnhance
import EarshotTestSupport
import Foundation
import Testing

@Suite struct AlertSeparationTests {
    let rate = 16_000.0

    /// Runs a suppressor over channels in blocks of 160 and returns the output, delay removed.
    func process(_ suppressor: NoiseSuppressor, _ channels: [[Float]]) throws -> [[Float]] {
        let suppressor = suppressor
        try suppressor.prepare(ProcessSpec(sampleRate: rate, maximumBlockFrames: 160, channelCount: channels.count))
        let latency = suppressor.latencySamples
        let padded = channels.map { $0 + [Float](repeating: 0, count: latency) }
        let buffer = AudioBuffer(channels: padded)
        var position = 0
        while position < padded[0].count {
            var block = buffer.block().frames(from: position, count: min(160, padded[0].count - position))
            suppressor.process(&block)
            position += 160
        }
        return buffer.toArrays().map { Array($0[latency...]) }
    }

    func levelDB(_ x: ArraySlice<Float>) -> Double {
        10 * log10(x.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(x.count) + 1e-30)
    }

    /// A steady 3.1 kHz alarm tone in noise: the suppressor alone learns it as noise and takes
    /// it down; separated, it passes within 1 dB while the noise away from it is still reduced.
    /// The probe channels measure each component exactly.
    @Test func separatedAlertPassesWhileNoiseIsReduced() throws {
        let count = Int(4 * rate)
        let background = noise(count: count, seed: 3, amplitude: 0.1)
        let tone = (0..<count).map { n in n < 8_000 ? 0 : Float(0.05 * sin(2 * Double.pi * 3100 * Double(n) / rate)) }
        let mix = zip(background, tone).map { $0 + $1 }
        let sounding = try NoiseSuppressor(separatesAlerts: true, probeChannels: true)
        sounding.alertSounding = true
        let separated = try process(sounding, [mix, tone, background])
        let plain = try process(try NoiseSuppressor(probeChannels: true), [mix, tone, background])
        let late = 32_000..<count  // two seconds in: the suppressor has long learned the tone
        let keptSeparated = levelDB(separated[1][late]) - levelDB(tone[late])
        let keptPlain = levelDB(plain[1][late]) - levelDB(tone[late])
        #expect(abs(keptSeparated) < 1, "separated: \(keptSeparated) dB")
        #expect(keptPlain < -6, "the suppressor alone removes a steady tone: \(keptPlain) dB")
        // The learned model reduces the rest by at most 8 dB while an alert is separated, and
        // not at all within 500 Hz of it: an eighth of this white noise's band, so about 5 dB.
        #expect(levelDB(separated[2][late]) - levelDB(background[late]) < -4, "noise still reduced")
    }

    /// With no alert sounding the output is the suppressor's alone, sample for sample; probe
    /// channels given the mix itself come out as the mix does.
    @Test func closedGateChangesNothing() throws {
        let count = Int(2 * rate)
        let mix = zip(noise(count: count, seed: 4, amplitude: 0.1), sine(frequencyHz: 1000, sampleRate: rate, count: count, amplitude: 0.05)).map { $0 + $1 }
        let closed = try process(try NoiseSuppressor(separatesAlerts: true, probeChannels: true), [mix, mix])
        let none = try process(try NoiseSuppressor(), [mix])
        #expect(closed[0] == none[0])
        #expect(closed[1] == closed[0])
    }

    /// An alert comes and goes: once it has stopped sounding and the mask faded, the output is the
    /// enhancement's alone again, sample for sample.
    @Test func afterAnAlertTheOutputIsTheEnhancementsAgain() throws {
        let count = Int(4 * rate)
        let tone = (0..<count).map { n in (16_000..<32_000).contains(n) ? Float(0.05 * sin(2 * Double.pi * 3100 * Double(n) / rate)) : 0 }
        let mix = zip(noise(count: count, seed: 5, amplitude: 0.1), tone).map { $0 + $1 }
        let separating = try NoiseSuppressor(separatesAlerts: true)
        let plain = try NoiseSuppressor()
        try separating.prepare(ProcessSpec(sampleRate: rate, maximumBlockFrames: 160, channelCount: 1))
        try plain.prepare(ProcessSpec(sampleRate: rate, maximumBlockFrames: 160, channelCount: 1))
        let a = AudioBuffer(channels: [mix]), b = AudioBuffer(channels: [mix])
        for start in stride(from: 0, to: count, by: 160) {
            separating.alertSounding = (16_000..<33_600).contains(start)
            var x = a.block().frames(from: start, count: 160), y = b.block().frames(from: start, count: 160)
            separating.process(&x)
            plain.process(&y)
        }
        let separated = a.toArrays()[0], reference = b.toArrays()[0]
        #expect(separated[20_000..<30_000] != reference[20_000..<30_000], "the alert was let through")
        #expect(separated[36_000...] == reference[36_000...], "and afterwards nothing differs")
    }
}

@Suite struct AlertSeparationMaskTests {
    /// A spectrum (interleaved re, im) with one strong bin over a flat floor.
    func spectrum(bins: Int, peak: Int) -> [Float] {
        var out = [Float](repeating: 0, count: 2 * bins)
        for k in 0..<bins { out[2 * k] = 0.01 }
        out[2 * peak] = 10
        return out
    }

    func update(_ separation: inout AlertSeparation, peak: Int, open: Bool, bins: Int) -> Bool {
        var frame = spectrum(bins: bins, peak: peak)
        return frame.withUnsafeMutableBufferPointer { separation.update(spectrum: $0, open: open) }
    }

    /// One alert's peak must not reach into the next alert: after the gate has closed and the
    /// fade is over, the next alert's first frame holds only its own peak.
    @Test func maskDoesNotCarryIntoTheNextAlert() {
        let bins = 257
        var separation = AlertSeparation(bins: bins)
        for _ in 0..<40 { _ = update(&separation, peak: 60, open: true, bins: bins) }
        #expect(separation.mask[60] > 0.9)
        var closedFrames = 0
        while update(&separation, peak: 60, open: false, bins: bins) { closedFrames += 1 }
        #expect(closedFrames < 20, "the fade-out ends")
        for _ in 0..<50 { _ = update(&separation, peak: 60, open: false, bins: bins) }
        _ = update(&separation, peak: 180, open: true, bins: bins)
        #expect(separation.mask[60] == 0, "the first alert's peak leaked: \(separation.mask[60])")
        #expect(separation.mask[180] > 0, "the new alert's own peak is taken")
    }

    /// While the gate is merely closing (a pause inside one alert), the mask carries on.
    @Test func maskBridgesABriefClosing() {
        let bins = 257
        var separation = AlertSeparation(bins: bins)
        for _ in 0..<40 { _ = update(&separation, peak: 60, open: true, bins: bins) }
        for _ in 0..<3 { _ = update(&separation, peak: 60, open: false, bins: bins) }
        _ = update(&separation, peak: 60, open: true, bins: bins)
        #expect(separation.mask[60] > 0.5)
    }
}
