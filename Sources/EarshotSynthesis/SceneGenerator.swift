import EarshotAlerts
import EarshotCore
import EarshotDSP
import EarshotRoom
import Foundation

/// One alert placed in a scene.
public struct SceneLabel: Codable, Equatable, Sendable {
    public var alertClass: AlertClass
    public var start: Double
    public var end: Double
    /// Alert level over everything else at that moment, dB.
    public var snrDB: Double
    public var variant: String
    public var description: String
    public var room: String

    enum CodingKeys: String, CodingKey {
        case alertClass = "class", start, end, snrDB = "snr", variant, description, room
    }
}

/// Recordings a scene may draw on; empty lists fall back to what can be synthesised.
public struct SceneMaterial: Sendable {
    /// Speech clips at the scene's rate.
    public var speech: [[Float]]
    /// Background recordings at the scene's rate.
    public var noises: [(name: String, samples: [Float])]
    /// Measured room responses at the scene's rate.
    public var rooms: [(name: String, response: [Float])]

    public init(speech: [[Float]] = [], noises: [(name: String, samples: [Float])] = [], rooms: [(name: String, response: [Float])] = []) {
        self.speech = speech
        self.noises = noises
        self.rooms = rooms
    }
}

/// A generated scene: the mixture, the alerts alone as mixed into it, and their labels.
public struct Scene: Sendable {
    public var samples: [Float]
    /// The alert component of `samples`, sample for sample (for training targets and for
    /// measuring how much of it survives processing).
    public var alerts: [Float]
    public var labels: [SceneLabel]
}

/// Seeded scenes for training and evaluating the alert detector: a background (a real
/// recording, babble, traffic-like rumble, machinery hum or music-like chords), people talking,
/// and alerts at −10…+20 dB SNR, each source through a simulated or a measured room.
public enum SceneGenerator {
    public static func generate(seed: UInt64, durationSeconds: Double, sampleRate: Double, material: SceneMaterial,
                                alertsPerMinute: Double = 6) throws -> Scene {
        try EarshotError.validate(sampleRate: sampleRate)
        guard durationSeconds.isFinite, (1...3600).contains(durationSeconds) else {
            throw SynthesisError.duration(seconds: durationSeconds)
        }
        var random = SeededRandom(seed: seed)
        let count = Int(durationSeconds * sampleRate)

        // Background, then speech over it.
        var bed = background(count: count, sampleRate: sampleRate, material: material, random: &random)
        scale(&bed, toRMSDBFS: .random(in: -45 ... -25, using: &random))
        if !material.speech.isEmpty {
            var talk = [Float](repeating: 0, count: count)
            var t = Double.random(in: 0...2, using: &random)
            while t < durationSeconds {
                let clip = try throughRoom(material.speech.randomElement(using: &random)!, sampleRate: sampleRate, material: material, random: &random).samples
                add(clip, into: &talk, at: Int(t * sampleRate), gain: 1)
                t += Double(clip.count) / sampleRate + .random(in: 0.3...4, using: &random)
            }
            scale(&talk, toRMSDBFS: rmsDBFS(bed) + .random(in: 0...20, using: &random))
            add(talk, into: &bed, at: 0, gain: 1)
        }

        // Alerts, never overlapping, each at its own SNR against what is already there.
        var labels: [SceneLabel] = []
        var alerts = [Float](repeating: 0, count: count)
        guard alertsPerMinute.isFinite, alertsPerMinute >= 0 else {
            throw SynthesisError.alertsPerMinute(alertsPerMinute)
        }
        var t = Double.random(in: 0.5...3, using: &random)
        let meanGap = 60 / max(alertsPerMinute, 0.1)
        while alertsPerMinute > 0 && t < durationSeconds - 1 {
            let alertClass = AlertClass.allCases.randomElement(using: &random)!
            let sound = AlertSynthesis.random(alertClass, seed: random.next(), sampleRate: sampleRate, maximumSeconds: min(6, durationSeconds - t))
            let (placed, roomName) = try throughRoom(sound.samples, sampleRate: sampleRate, material: material, random: &random)
            let first = Int(t * sampleRate)
            let length = min(placed.count, count - first)
            guard length > Int(0.1 * sampleRate) else { break }
            let snr = Double.random(in: -10...20, using: &random)
            // Level over the mixture during the alert's own loud part (its active frames).
            let active = activeRange(placed, length: length, window: Int(0.01 * sampleRate))
            let under = rmsDBFS(Array(bed[(first + active.lowerBound)..<(first + active.upperBound)]))
            let over = rmsDBFS(Array(placed[active]))
            let gain = Float(Decibels.toAmplitude(under + snr - over))
            add(Array(placed[0..<length]), into: &bed, at: first, gain: gain)
            add(Array(placed[0..<length]), into: &alerts, at: first, gain: gain)
            labels.append(SceneLabel(
                alertClass: alertClass, start: t + Double(active.lowerBound) / sampleRate,
                end: t + Double(min(active.upperBound, length)) / sampleRate, snrDB: (snr * 10).rounded() / 10 + 0,  // + 0: no "-0"
                variant: sound.variant, description: sound.description, room: roomName))
            t += Double(length) / sampleRate + .random(in: 0.5...(2 * meanGap), using: &random)
        }
        // Keep the mix inside full scale.
        let peak = bed.reduce(Float(0)) { max($0, abs($1)) }
        if peak > 0.95 {
            for i in bed.indices { bed[i] *= 0.95 / peak; alerts[i] *= 0.95 / peak }
        }
        return Scene(samples: bed, alerts: alerts, labels: labels)
    }

    /// A recording, or one of four synthetic backgrounds.
    static func background(count: Int, sampleRate: Double, material: SceneMaterial, random: inout SeededRandom) -> [Float] {
        let kinds = (material.noises.isEmpty ? 0 : 3) + 4
        let pick = Int.random(in: 0..<kinds, using: &random)
        if pick >= 4, let noise = material.noises.randomElement(using: &random)?.samples, noise.count > 0 {
            let start = Int.random(in: 0..<noise.count, using: &random)
            return (0..<count).map { noise[(start + $0) % noise.count] }
        }
        switch pick {
        case 0 where material.speech.count >= 4:  // babble: several talkers at once
            var out = [Float](repeating: 0, count: count)
            for _ in 0..<Int.random(in: 4...8, using: &random) {
                let clip = material.speech.randomElement(using: &random)!
                let offset = Int.random(in: 0..<max(1, clip.count), using: &random)
                for i in 0..<count { out[i] += clip[(offset + i) % clip.count] }
            }
            return out
        case 1:  // traffic-like: brown noise under a slow swell
            var level = 0.0
            let rate = Double.random(in: 0.05...0.3, using: &random)
            return (0..<count).map { n in
                level = 0.995 * level + random.nextGaussian() * 0.1
                return Float(level * (1 + 0.6 * sin(2 * Double.pi * rate * Double(n) / sampleRate)))
            }
        case 2:  // machinery: mains-related hum with harmonics, and noise
            let hum = [50.0, 60.0].randomElement(using: &random)! * Double(Int.random(in: 1...2, using: &random))
            return (0..<count).map { n in
                let t = Double(n) / sampleRate
                return Float((1...6).reduce(0.0) { $0 + sin(2 * Double.pi * hum * Double($1) * t) / Double($1) } + 0.3 * random.nextGaussian())
            }
        default:  // music-like: a chord every second or two
            var out = [Float](repeating: 0, count: count)
            var start = 0
            while start < count {
                let length = Int(Double.random(in: 0.5...2, using: &random) * sampleRate)
                let root = Double.random(in: 110...440, using: &random)
                for ratio in [1.0, 1.25, 1.5, 2] {
                    for n in 0..<min(length, count - start) {
                        let t = Double(n) / sampleRate
                        out[start + n] += Float(sin(2 * Double.pi * root * ratio * t) * exp(-t / 0.8))
                    }
                }
                start += length
            }
            return out
        }
    }

    /// Half the time the dry sound; otherwise a measured room or a simulated shoebox.
    static func throughRoom(_ x: [Float], sampleRate: Double, material: SceneMaterial, random: inout SeededRandom) throws -> (samples: [Float], room: String) {
        let choice = Double.random(in: 0..<1, using: &random)
        if choice < 0.5 { return (x, "dry") }
        if choice < 0.7, let measured = material.rooms.randomElement(using: &random) {
            return (Convolution.convolve(x, measured.response), measured.name)
        }
        let (w, d, h) = (Double.random(in: 3...10, using: &random), Double.random(in: 3...8, using: &random), Double.random(in: 2.4...4, using: &random))
        let rt60 = Double.random(in: 0.2...0.8, using: &random)
        let room = try ShoeboxRoom(width: w, depth: d, height: h, rt60: rt60)
        func point() -> RoomPoint {
            RoomPoint(.random(in: 0.5...(w - 0.5), using: &random), .random(in: 0.5...(d - 0.5), using: &random), .random(in: 1...(h - 0.5), using: &random))
        }
        let response = try room.impulseResponse(source: point(), microphone: point(), sampleRate: sampleRate, durationSeconds: min(1, rt60))
        return (Convolution.convolve(x, response), String(format: "shoebox %.1fx%.1fx%.1f m, RT60 %.2f s", w, d, h, rt60))
    }

    /// The span of the first `length` samples that is within 30 dB of their loudest window.
    static func activeRange(_ x: [Float], length: Int, window: Int) -> Range<Int> {
        var energies: [Float] = []
        for start in stride(from: 0, to: length, by: window) {
            energies.append(x[start..<min(start + window, length)].reduce(0) { $0 + $1 * $1 })
        }
        let loudest = energies.max() ?? 0
        let threshold = loudest * 0.001
        let first = energies.firstIndex { $0 >= threshold } ?? 0
        let last = energies.lastIndex { $0 >= threshold } ?? 0
        return (first * window)..<min(length, (last + 1) * window)
    }

    static func rmsDBFS(_ x: [Float]) -> Double {
        Decibels.fromAmplitude((x.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(max(x.count, 1))).squareRoot())
    }

    static func scale(_ x: inout [Float], toRMSDBFS target: Double) {
        let current = rmsDBFS(x)
        guard current.isFinite else { return }
        let gain = Float(Decibels.toAmplitude(target - current))
        for i in x.indices { x[i] *= gain }
    }

    static func add(_ x: [Float], into y: inout [Float], at offset: Int, gain: Float) {
        for (i, v) in x.enumerated() where offset + i < y.count && offset + i >= 0 { y[offset + i] += gain * v }
    }
}
