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
