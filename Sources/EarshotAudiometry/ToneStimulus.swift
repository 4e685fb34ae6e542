import EarshotCore
import Foundation

/// The sound of one presentation: a pure tone in one ear, steady or pulsed, with
/// raised-cosine ramps so it starts and stops without a click (which would be heard at other
/// frequencies).
public struct ToneStimulus: Sendable {
    public enum Shape: String, Sendable, Codable {
        /// One tone of `durationSeconds`.
        case steady
        /// Three 200 ms tones 200 ms apart: easier to tell from tinnitus.
        case pulsed
    }

    public var frequencyHz: Double
    /// Peak level of the sine, dBFS (from `Calibration.digitalLevel`).
    public var levelDBFS: Double
    /// The ear that hears it; the other channel stays silent.
    public var ear: Ear
    public var shape: Shape = .pulsed
    public var durationSeconds = 1.0
    public var rampSeconds = 0.025

    public init(frequencyHz: Double, levelDBFS: Double, ear: Ear, shape: Shape = .pulsed) {
        self.frequencyHz = frequencyHz
        self.levelDBFS = levelDBFS
        self.ear = ear
        self.shape = shape
    }

    /// Stereo, planar: channel 0 is the left ear, channel 1 the right.
    public func render(sampleRate: Double) throws -> [[Float]] {
        try EarshotError.validate(sampleRate: sampleRate)
        guard levelDBFS <= 0 else {
            throw AudiometryError.toneWouldClip(dBFS: levelDBFS)
        }
        guard frequencyHz > 0, frequencyHz < sampleRate / 2 else {
            throw AudiometryError.toneAboveNyquist(hz: frequencyHz, sampleRate: sampleRate)
        }
        let amplitude = pow(10, levelDBFS / 20)
        let bursts: [(start: Double, length: Double)] =
            shape == .steady ? [(0, durationSeconds)] : [(0, 0.2), (0.4, 0.2), (0.8, 0.2)]
        let total = Int(((bursts.last!.start + bursts.last!.length) * sampleRate).rounded(.up))
        var tone = [Float](repeating: 0, count: total)
        let ramp = rampSeconds * sampleRate
        for burst in bursts {
            let first = Int(burst.start * sampleRate), count = Int(burst.length * sampleRate)
            for n in 0..<count where first + n < total {
                let edge = min(Double(n), Double(count - 1 - n))
                let envelope = edge >= ramp ? 1 : 0.5 - 0.5 * cos(Double.pi * edge / ramp)
                let t = Double(first + n) / sampleRate
                tone[first + n] = Float(amplitude * envelope * sin(2 * Double.pi * frequencyHz * t))
            }
        }
        let silence = [Float](repeating: 0, count: total)
        return ear == .left ? [tone, silence] : [silence, tone]
    }
}
