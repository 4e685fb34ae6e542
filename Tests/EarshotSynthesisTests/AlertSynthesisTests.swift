import EarshotAlerts
import EarshotSynthesis
import EarshotCore
import EarshotDSP
import Foundation
import Testing

/// The strongest frequency in each 64 ms frame, and each frame's level in dB.
func track(_ x: [Float], rate: Double, frame: Int = 1024) -> [(hz: Double, db: Double)] {
    let fft = RealFFT(size: frame)
    let window = Window.hann.coefficients(count: frame)
    return stride(from: 0, to: x.count - frame, by: frame / 2).map { start in
        for i in 0..<frame { fft.time[i] = x[start + i] * window[i] }
        fft.forward()
        var best = 1, total: Float = 0
        for k in 1..<fft.binCount {
            total += fft.power(bin: k)
            if fft.power(bin: k) > fft.power(bin: best) { best = k }
        }
        return (Double(best) * rate / Double(frame), 10 * log10(Double(total) + 1e-20))
    }
}

@Suite struct AlertSynthesisTests {
    let rate = 16_000.0

    @Test func everyClassIsReproducibleAndVaried() {
        for alertClass in AlertClass.allCases {
            let a = AlertSynthesis.random(alertClass, seed: 11, sampleRate: rate)
            #expect(a.samples == AlertSynthesis.random(alertClass, seed: 11, sampleRate: rate).samples)
            #expect(a.alertClass == alertClass && !a.samples.isEmpty)
            #expect(abs(a.samples.map { abs($0) }.max()! - 0.9) < 1e-4, "peak-normalised")
            #expect(a.samples.allSatisfy { $0.isFinite })
            let variants = Set((0..<40).map { AlertSynthesis.random(alertClass, seed: UInt64($0), sampleRate: rate).variant })
            #expect(variants.count >= 2, "\(alertClass): only \(variants)")
        }
    }

    @Test func wailSweepsItsRange() {
        let siren = AlertSynthesis.siren(.init(pattern: .wail, lowHz: 600, highHz: 1500, cycleSeconds: 2, harmonics: 3, rolloff: 1,
                                               seconds: 4, speedMetresPerSecond: 0, closestMetres: 10), sampleRate: rate)
        let pitches = track(siren.samples, rate: rate).map(\.hz)
        #expect(pitches.min()! < 700 && pitches.max()! > 1400)
        #expect(pitches.allSatisfy { $0 > 550 && $0 < 1550 }, "the fundamental dominates")
    }

    @Test func twoToneAlternatesAFourthApart() {
        let siren = AlertSynthesis.siren(.init(pattern: .europeanTwoTone, lowHz: 435, highHz: 580, cycleSeconds: 2, harmonics: 1, rolloff: 1,
                                               seconds: 4, speedMetresPerSecond: 0, closestMetres: 10), sampleRate: rate)
        let pitches = track(siren.samples, rate: rate).map(\.hz)
        #expect(pitches.filter { abs($0 - 435) < 16 }.count > pitches.count / 3)
        #expect(pitches.filter { abs($0 - 580) < 16 }.count > pitches.count / 3)
    }

    @Test func passingSirenIsHigherComingThanGoing() {
        // 25 m/s: f·c/(c−v) approaching, f·c/(c+v) leaving; 1000 Hz → 1079 and 932 Hz.
        let siren = AlertSynthesis.siren(.init(pattern: .hiLo, lowHz: 1000, highHz: 1000, cycleSeconds: 1, harmonics: 1, rolloff: 1,
                                               seconds: 8, speedMetresPerSecond: 25, closestMetres: 5), sampleRate: rate)
        let frames = track(siren.samples, rate: rate)
        let early = frames[2].hz, late = frames[frames.count - 3].hz
        #expect(abs(early - 1000 * 343 / (343 - 25)) < 20 && abs(late - 1000 * 343 / (343 + 25)) < 20, "\(early) → \(late)")
        #expect(frames[frames.count / 2].db > frames[2].db + 10, "louder as it passes")
    }

    @Test func temporalThreeHasItsCadence() {
        let alarm = AlertSynthesis.smokeAlarm(.init(pattern: .temporalThree, frequencyHz: 3100, seconds: 8), sampleRate: rate)
        // On/off per 10 ms from the envelope.
        let hop = Int(0.01 * rate)
        let on = stride(from: 0, to: alarm.samples.count - hop, by: hop).map { start in
            alarm.samples[start..<(start + hop)].map { abs($0) }.max()! > 0.3
        }
        var onsets: [Double] = []
        for i in 1..<on.count where on[i] && !on[i - 1] { onsets.append(Double(i) * 0.01) }
        #expect(on[0])
        // Beeps at 0, 1, 2 s, then the next cycle at 4, 5, 6 s.
        #expect(zip(onsets, [1.0, 2, 4, 5, 6]).allSatisfy { abs($0 - $1) < 0.02 }, "\(onsets)")
        let pitches = track(alarm.samples, rate: rate).filter { $0.db > -20 }.map(\.hz)
        #expect(pitches.allSatisfy { abs($0 - 3100) < 40 })
    }

    @Test func hornsAndDoorbellsSoundWhereTheyShould() {
        let horn = AlertSynthesis.carHorn(.init(notesHz: [400, 500], honks: [(0.1, 0.8)], rolloff: 0.8), sampleRate: rate)
        let loudest = track(horn.samples, rate: rate).max { $0.db < $1.db }!
        #expect([400.0, 500, 800, 1000, 1200, 1500].contains { abs(loudest.hz - $0) < 20 }, "a harmonic of a horn note: \(loudest.hz)")
        let chime = AlertSynthesis.doorbell(.chime(notesHz: [660, 528], gapSeconds: 0.6, decaySeconds: 0.5), sampleRate: rate)
        let frames = track(chime.samples, rate: rate)
        #expect(abs(frames[2].hz - 660) < 16 && abs(frames[Int(0.8 * rate) / 512].hz - 528) < 16, "ding, then dong")
        #expect(frames.last!.db < frames[2].db - 20, "the bars ring out")
    }
}
