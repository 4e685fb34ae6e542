import EarshotCore
import Foundation

/// Seeded generators for alert sounds and backgrounds. Every generator adds into `into`
/// starting at `startFrame`, so scenes are built by layering.
public enum Synthesis {
    /// A piezo smoke alarm: a square-ish tone near 3.1 kHz in the ISO 8201 temporal-three
    /// pattern (0.5 s on, 0.5 s off, three times, then 1.5 s off), for `cycles` cycles.
    public static func smokeAlarm(
        into signal: inout [Float], sampleRate: Double, startFrame: Int, cycles: Int = 1,
        frequencyHz: Double = 3100, amplitude: Double = 0.25
    ) {
        let on = 0.5, off = 0.5, pause = 1.5
        let cycle = 3 * (on + off) - off + pause
        let ramp = 0.005 * sampleRate  // 5 ms edges: no clicks
        for k in 0..<cycles {
            for beep in 0..<3 {
                let start = startFrame + Int((Double(k) * cycle + Double(beep) * (on + off)) * sampleRate)
                let length = Int(on * sampleRate)
                for n in 0..<length where start + n < signal.count && start + n >= 0 {
                    let t = Double(n) / sampleRate
                    let phase = 2 * Double.pi * frequencyHz * t
                    // Fundamental plus the odd harmonics a piezo disc adds.
                    let tone = sin(phase) + 0.3 * sin(3 * phase) + 0.15 * sin(5 * phase)
                    let edge = min(1, Double(n) / ramp, Double(length - n) / ramp)
                    signal[start + n] += Float(amplitude * edge * tone / 1.45)
                }
            }
        }
    }

    /// A two-tone "ding-dong" chime: struck bars with decaying partials, the second strike
    /// `gapSeconds` after the first, a minor third lower.
    public static func doorbellChime(
        into signal: inout [Float], sampleRate: Double, startFrame: Int,
        highHz: Double = 660, lowHz: Double = 550, gapSeconds: Double = 0.6, amplitude: Double = 0.3
    ) {
        for (strike, frequency) in [(0.0, highHz), (gapSeconds, lowHz)] {
            let start = startFrame + Int(strike * sampleRate)
            let length = Int(1.6 * sampleRate)
            for n in 0..<length where start + n < signal.count && start + n >= 0 {
                let t = Double(n) / sampleRate
                let attack = min(1, t / 0.002)
                let body = sin(2 * .pi * frequency * t) * exp(-t / 0.45)
                let overtone = 0.35 * sin(2 * .pi * 2.76 * frequency * t) * exp(-t / 0.12)
                signal[start + n] += Float(amplitude * attack * (body + overtone))
            }
        }
    }

    /// Pink (1/f) noise at an RMS level in dBFS, by Paul Kellet's economy filter over white noise.
    public static func pinkNoise(count: Int, levelDBFS: Double, seed: UInt64) -> [Float] {
        var random = SeededRandom(seed: seed)
        var b0 = 0.0, b1 = 0.0, b2 = 0.0
        var samples = (0..<count).map { _ -> Double in
            let white = random.nextGaussian()
            b0 = 0.99765 * b0 + white * 0.0990460
            b1 = 0.96300 * b1 + white * 0.2965164
            b2 = 0.57000 * b2 + white * 1.0526913
            return b0 + b1 + b2 + white * 0.1848
        }
        let rms = (samples.reduce(0) { $0 + $1 * $1 } / Double(max(count, 1))).squareRoot()
        let scale = rms > 0 ? pow(10, levelDBFS / 20) / rms : 0
        for i in samples.indices { samples[i] *= scale }
        return samples.map(Float.init)
    }
}

/// The scene `earshot demo` plays: a quiet room, a doorbell, then a smoke alarm.
public struct DemoScene: Sendable {
    public struct Placement: Sendable {
        public var name: String
        public var startSeconds: Double
        public var endSeconds: Double
    }

    public let sampleRate: Double
    public let samples: [Float]
    public let placements: [Placement]
    public let backgroundDBFS: Double

    public init(seed: UInt64 = 1, sampleRate: Double = 16_000, durationSeconds: Double = 9) {
        let count = Int(durationSeconds * sampleRate)
        backgroundDBFS = -45
        var signal = Synthesis.pinkNoise(count: count, levelDBFS: backgroundDBFS, seed: seed)
        var random = SeededRandom(seed: seed &+ 1)
        let chimeStart = 1 + Double.random(in: 0..<0.5, using: &random)
        let alarmStart = 4 + Double.random(in: 0..<0.5, using: &random)
        Synthesis.doorbellChime(into: &signal, sampleRate: sampleRate, startFrame: Int(chimeStart * sampleRate))
        Synthesis.smokeAlarm(into: &signal, sampleRate: sampleRate, startFrame: Int(alarmStart * sampleRate))
        self.sampleRate = sampleRate
        samples = signal
        placements = [
            Placement(name: "doorbell chime (660/550 Hz)", startSeconds: chimeStart, endSeconds: chimeStart + 2.2),
            Placement(name: "smoke alarm, temporal-three (3.1 kHz)", startSeconds: alarmStart, endSeconds: alarmStart + 2.5),
        ]
    }
}
