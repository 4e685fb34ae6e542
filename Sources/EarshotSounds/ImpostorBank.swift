import EarshotCore
import Foundation

/// What an enrolled sound is checked against before it is trusted: a few minutes of seeded,
/// generic tonal material that is not any particular doorbell: music-like notes and chords
/// (harmonic partials with decays, in no fixed key), and runs of electronic beeps at random
/// pitches. A chime whose landmarks such material reproduces by chance would be announced for
/// the radio; its threshold is raised above the best score it reaches here.
///
/// Built once per process (a fraction of a second): its landmarks and its tonal picture.
public enum ImpostorBank {
    public static let seconds = 240.0

    public static let frames: [UInt64] = LandmarkAnalyzer.landmarks(of: audio())
    /// Its tonal picture, as a stream hears it (`TonalPicture`).
    public static let tonalFrames: [Float] = TonalPicture.frames(of: audio(), tracksFloor: true)

    /// The material itself, 16 kHz mono, about −20 dBFS.
    static func audio() -> [Float] {
        let rate = LandmarkAnalyzer.sampleRate
        var random = SeededRandom(seed: 0x1B5E_C0DE)
        var out = [Float](repeating: 0, count: Int(seconds * rate))
        func note(at start: Double, hertz: Double, seconds length: Double, gain: Double, partials: Int, decay: Double) {
            let first = Int(start * rate), count = min(Int(length * rate), out.count - first)
            guard count > 0 else { return }
            let amplitudes = (1...partials).map { k in gain * Double.random(in: 0.3...1, using: &random) / pow(Double(k), 1.3) }
            for n in 0..<count {
                let t = Double(n) / rate
                var value = 0.0
                for k in 1...partials where hertz * Double(k) < 7500 {
                    value += amplitudes[k - 1] * sin(2 * .pi * hertz * Double(k) * t)
                }
                out[first + n] += Float(value * exp(-decay * t) * min(1, t * 200))
            }
        }
        var time = 0.0
        while time < seconds - 2 {
            // A passage of 4–10 s: music of one to four voices, or a run of beeps.
            let passage = Double.random(in: 4...10, using: &random)
            if Double.random(in: 0...1, using: &random) < 0.75 {
                for _ in 0..<Int.random(in: 1...4, using: &random) {
                    var t = time + Double.random(in: 0...0.3, using: &random)
                    let beat = Double.random(in: 0.15...0.7, using: &random)
                    while t < time + passage {
                        let semitone = Double(Int.random(in: -24...26, using: &random))
                        let length = beat * [0.5, 1, 1, 2, 3].randomElement(using: &random)!
                        note(at: t, hertz: 440 * pow(2, semitone / 12), seconds: length * 1.4, gain: Double.random(in: 0.02...0.08, using: &random),
                             partials: Int.random(in: 1...6, using: &random), decay: Double.random(in: 1...9, using: &random))
                        t += length
                    }
                }
            } else {
                var t = time
                while t < time + passage {
                    let hertz = Double.random(in: 500...4000, using: &random), length = Double.random(in: 0.08...0.6, using: &random)
                    for _ in 0..<Int.random(in: 1...4, using: &random) {
                        note(at: t, hertz: hertz, seconds: length, gain: 0.05, partials: Int.random(in: 1...3, using: &random), decay: 0.5)
                        t += length + Double.random(in: 0.05...0.4, using: &random)
                    }
                    t += Double.random(in: 0.5...2, using: &random)
                }
            }
            time += passage
        }
        return out
    }
}
