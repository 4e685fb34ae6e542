import EarshotAlerts
import EarshotCore
import Foundation

/// Seeded background sounds.
public enum Synthesis {
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
        let chime = AlertSynthesis.doorbell(.chime(notesHz: [660, 550], gapSeconds: 0.6, decaySeconds: 0.45), sampleRate: sampleRate)
        let alarm = AlertSynthesis.smokeAlarm(.init(pattern: .temporalThree, frequencyHz: 3100, seconds: 2.6), sampleRate: sampleRate)
        for (sound, start, level) in [(chime, chimeStart, Float(0.35)), (alarm, alarmStart, Float(0.25))] {
            let first = Int(start * sampleRate)
            for (n, x) in sound.samples.enumerated() where first + n < signal.count { signal[first + n] += level * x }
        }
        self.sampleRate = sampleRate
        samples = signal
        placements = [
            Placement(name: "doorbell chime (660/550 Hz)", startSeconds: chimeStart, endSeconds: chimeStart + 2.2),
            Placement(name: "smoke alarm, temporal-three (3.1 kHz)", startSeconds: alarmStart, endSeconds: alarmStart + 2.5),
        ]
    }
}
