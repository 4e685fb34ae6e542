import EarshotAlerts
import EarshotCore
import Foundation

/// A synthesised alert: the samples, what it is, and how it was made.
public struct AlertSound: Sendable {
    public var alertClass: AlertClass
    /// The variant drawn ("wail", "temporal_three", "ding_dong", …).
    public var variant: String
    /// Parameters in words, for labels and reports.
    public var description: String
    public var sampleRate: Double
    /// Peak-normalised to 0.9; scenes set the level.
    public var samples: [Float]
}

/// Seeded generators with wide parameter ranges: the detector is trained on these and judged
/// on real recordings, so variety matters more than any one sound being exact.
public enum AlertSynthesis {
    /// A random sound of `alertClass`, at most `maximumSeconds` long.
    public static func random(_ alertClass: AlertClass, seed: UInt64, sampleRate: Double, maximumSeconds: Double = 6) -> AlertSound {
        var random = SeededRandom(seed: seed)
        switch alertClass {
        case .siren: return siren(SirenParameters.random(using: &random, seconds: maximumSeconds), sampleRate: sampleRate)
        case .smokeAlarm: return smokeAlarm(SmokeAlarmParameters.random(using: &random, seconds: maximumSeconds), sampleRate: sampleRate)
        case .carHorn: return carHorn(CarHornParameters.random(using: &random), sampleRate: sampleRate)
        case .doorbell: return doorbell(DoorbellParameters.random(using: &random), sampleRate: sampleRate)
        }
    }

    /// The first seed whose sound is the class's most familiar form (a doorbell's ding-dong
    /// chime rather than a buzzer): what a person asking for "a doorbell" expects to hear.
    public static func familiarSeed(_ alertClass: AlertClass) -> UInt64 {
        guard alertClass == .doorbell else { return 1 }
        return (1...UInt64(1000)).first { seed in
            var random = SeededRandom(seed: seed)
            if case .chime = DoorbellParameters.random(using: &random) { return true }
            return false
        } ?? 1
    }

    // MARK: Sirens

    public struct SirenParameters: Sendable {
        public enum Pattern: String, SnakeCaseValue, Sendable {
            public init?(rawValue: String) {
                guard let value = Self.named(rawValue) else { return nil }
                self = value
            }

            /// A slow rise and fall (US "wail").
            case wail
            /// The same sweep, several times a second.
            case yelp
            /// Two tones alternating (hi-lo).
            case hiLo = "hi_lo"
            /// The European two-tone ("Martinshorn"): a fourth apart, about a second each.
            case europeanTwoTone = "european_two_tone"
            /// A very fast sweep (piercer, phaser).
            case piercer
        }

        public var pattern: Pattern
        public var lowHz: Double
        public var highHz: Double
        /// Seconds per up-and-down sweep, or per pair of tones.
        public var cycleSeconds: Double
        /// Number of harmonics (1 = a sine; electronic and mechanical sirens have many).
        public var harmonics: Int
        /// Amplitude of harmonic k is k^(−rolloff).
        public var rolloff: Double
        public var seconds: Double
        /// A passing vehicle: speed (m/s) and closest distance (m); speed 0 stands still.
        public var speedMetresPerSecond: Double
        public var closestMetres: Double

        public init(pattern: Pattern, lowHz: Double, highHz: Double, cycleSeconds: Double, harmonics: Int, rolloff: Double,
                    seconds: Double, speedMetresPerSecond: Double = 0, closestMetres: Double = 10) {
            (self.pattern, self.lowHz, self.highHz, self.cycleSeconds) = (pattern, lowHz, highHz, cycleSeconds)
            (self.harmonics, self.rolloff, self.seconds) = (max(1, harmonics), rolloff, seconds)
            (self.speedMetresPerSecond, self.closestMetres) = (speedMetresPerSecond, max(1, closestMetres))
        }

        static func random(using random: inout SeededRandom, seconds: Double) -> SirenParameters {
            let pattern = Pattern.allCases.randomElement(using: &random)!
            var low: Double, high: Double, cycle: Double
            switch pattern {
            case .wail: low = .random(in: 500...800, using: &random); high = .random(in: 1200...1800, using: &random); cycle = .random(in: 2...6, using: &random)
            case .yelp: low = .random(in: 500...800, using: &random); high = .random(in: 1200...1800, using: &random); cycle = .random(in: 0.15...0.45, using: &random)
            case .hiLo: low = .random(in: 400...800, using: &random); high = low * .random(in: 1.2...1.6, using: &random); cycle = .random(in: 0.8...1.6, using: &random)
            case .europeanTwoTone: low = .random(in: 380...480, using: &random); high = low * 4 / 3; cycle = .random(in: 1.6...3.2, using: &random)
            case .piercer: low = .random(in: 700...1200, using: &random); high = low * .random(in: 1.5...2.2, using: &random); cycle = .random(in: 0.06...0.12, using: &random)
            }
            let moving = Double.random(in: 0..<1, using: &random) < 0.5
            return SirenParameters(
                pattern: pattern, lowHz: low, highHz: high, cycleSeconds: cycle, harmonics: .random(in: 1...8, using: &random),
                rolloff: .random(in: 0.6...2, using: &random), seconds: max(1, seconds * .random(in: 0.6...1, using: &random)),
                speedMetresPerSecond: moving ? .random(in: 5...30, using: &random) : 0, closestMetres: .random(in: 5...60, using: &random))
        }
    }

    public static func siren(_ p: SirenParameters, sampleRate: Double) -> AlertSound {
        func frequency(_ t: Double) -> Double {
            let phase = (t / p.cycleSeconds).truncatingRemainder(dividingBy: 1)
            switch p.pattern {
            case .wail, .yelp, .piercer:
                // Up in the first part of the cycle, down in the rest (mechanical sirens spin up fast).
                let up = p.pattern == .wail ? 0.4 : 0.5
                let x = phase < up ? phase / up : 1 - (phase - up) / (1 - up)
                return p.lowHz + (p.highHz - p.lowHz) * x
            case .hiLo, .europeanTwoTone:
                return phase < 0.5 ? p.highHz : p.lowHz
            }
        }
        // The source as emitted, on a grid of emission times; the listener hears it delayed by
        // distance / c (Doppler) and weakened by 1 / distance.
        let count = Int(p.seconds * sampleRate)
        let nyquist = sampleRate / 2
        var phase = 0.0
        let farthest = ((p.speedMetresPerSecond * p.seconds / 2) * (p.speedMetresPerSecond * p.seconds / 2) + p.closestMetres * p.closestMetres).squareRoot()
        let emitted = (0..<(count + Int(farthest / 343 * sampleRate) + 2)).map { n -> Float in
            let f = frequency(Double(n) / sampleRate)
            phase += 2 * Double.pi * f / sampleRate
            var value = 0.0
            for k in 1...p.harmonics where Double(k) * f < nyquist * 0.95 {
                value += sin(Double(k) * phase) * pow(Double(k), -p.rolloff)
            }
            return Float(value)
        }
        let samples = travel(emitted, count: count, sampleRate: sampleRate, speed: p.speedMetresPerSecond, closest: p.closestMetres)
        let motion = p.speedMetresPerSecond > 0 ? String(format: ", passing at %.0f m/s, %.0f m away", p.speedMetresPerSecond, p.closestMetres) : ""
        return AlertSound(
            alertClass: .siren, variant: p.pattern.rawValue,
            description: String(format: "%@ siren %.0f–%.0f Hz, %.2f s cycle, %d harmonics%@", p.pattern.rawValue, p.lowHz, p.highHz, p.cycleSeconds, p.harmonics, motion),
            sampleRate: sampleRate, samples: normalized(samples))
    }

    /// What a listener at the roadside hears of `emitted` from a source passing in a straight
    /// line at `speed`, closest at the middle of the clip.
    static func travel(_ emitted: [Float], count: Int, sampleRate: Double, speed: Double, closest: Double) -> [Float] {
        let c = 343.0
        let middle = Double(count) / sampleRate / 2
        func distance(_ t: Double) -> Double {
            let along = speed * (t - middle)
            return (along * along + closest * closest).squareRoot()
        }
        // The emitted grid starts as early as the farthest point's delay, so every sample exists.
        let lead = max(distance(0), distance(Double(count) / sampleRate)) / c
        return (0..<count).map { n in
            let t = Double(n) / sampleRate
            let r = distance(t)
            let emission = (t - r / c + lead) * sampleRate
            let i = Int(emission.rounded(.down)), fraction = Float(emission - Double(i))
            guard i >= 0, i + 1 < emitted.count else { return 0 }
            let value = emitted[i] * (1 - fraction) + emitted[i + 1] * fraction
            return value * Float(closest / r)
        }
    }

    // MARK: Smoke, fire and CO alarms

    public struct SmokeAlarmParameters: Sendable {
        public enum Pattern: String, SnakeCaseValue, Sendable {
            public init?(rawValue: String) {
                guard let value = Self.named(rawValue) else { return nil }
                self = value
            }

            /// ISO 8201 / NFPA 72 evacuation: 0.5 s on, 0.5 s off, three times, then 1.5 s off.
            case temporalThree = "temporal_three"
            /// The CO pattern: 0.1 s on, 0.1 s off, four times, then 5 s off.
            case temporalFour = "temporal_four"
            /// Short chirps about once a second (some heat and smoke alarms).
            case chirp
            /// A continuous tone (older alarms, some fire panels).
            case continuous
        }

        public var pattern: Pattern
        /// 2.2–4.2 kHz piezo tones; 520 Hz for the low-frequency square-wave alarms NFPA 72
        /// asks for where people sleep.
        public var frequencyHz: Double
        /// A square wave (the low-frequency alarms) rather than a piezo's near-sine.
        public var square: Bool
        /// Beep and gap lengths as a share of the nominal (real alarms run fast or slow).
        public var tempo: Double
        /// Odd harmonics of the piezo disc, relative level.
        public var harmonicLevel: Double
        /// Slow frequency wobble, as piezo drivers drift, in Hz.
        public var wobbleHz: Double
        public var seconds: Double

        public init(pattern: Pattern, frequencyHz: Double, square: Bool = false, tempo: Double = 1, harmonicLevel: Double = 0.3,
                    wobbleHz: Double = 0, seconds: Double) {
            (self.pattern, self.frequencyHz, self.square, self.tempo, self.harmonicLevel, self.wobbleHz, self.seconds)
                = (pattern, frequencyHz, square, tempo, harmonicLevel, wobbleHz, seconds)
        }

        static func random(using random: inout SeededRandom, seconds: Double) -> SmokeAlarmParameters {
            let pattern = Pattern.allCases.randomElement(using: &random)!
            let lowFrequency = Double.random(in: 0..<1, using: &random) < 0.1
            return SmokeAlarmParameters(
                pattern: pattern, frequencyHz: lowFrequency ? .random(in: 500...540, using: &random) : .random(in: 2200...4200, using: &random),
                square: lowFrequency, tempo: .random(in: 0.8...1.2, using: &random),
                harmonicLevel: .random(in: 0...0.6, using: &random), wobbleHz: .random(in: 0...40, using: &random),
                seconds: max(2, seconds * .random(in: 0.7...1, using: &random)))
        }

        /// (start, length) of each beep in one cycle, and the cycle's length.
        var cycle: (beeps: [(Double, Double)], seconds: Double) {
            switch pattern {
            case .temporalThree: scaled([(0, 0.5), (1, 0.5), (2, 0.5)], 4)
            case .temporalFour: scaled([(0, 0.1), (0.2, 0.1), (0.4, 0.1), (0.6, 0.1)], 5.8)
            case .chirp: scaled([(0, 0.06)], 1)
            case .continuous: ([(0, seconds)], seconds)
            }
        }

        private func scaled(_ beeps: [(Double, Double)], _ cycle: Double) -> (beeps: [(Double, Double)], seconds: Double) {
            (beeps.map { ($0.0 * tempo, $0.1 * tempo) }, cycle * tempo)
        }
    }

    public static func smokeAlarm(_ p: SmokeAlarmParameters, sampleRate: Double) -> AlertSound {
        let count = Int(p.seconds * sampleRate)
        var samples = [Float](repeating: 0, count: count)
        let (beeps, cycleSeconds) = p.cycle
        let ramp = 0.004 * sampleRate
        var cycleStart = 0.0
        while cycleStart < p.seconds {
            for (start, length) in beeps {
                let first = Int((cycleStart + start) * sampleRate), total = Int(length * sampleRate)
                var phase = 0.0
                for n in 0..<total where first + n < count {
                    let t = Double(first + n) / sampleRate
                    phase += 2 * Double.pi * (p.frequencyHz + p.wobbleHz * sin(2 * Double.pi * 3 * t)) / sampleRate
                    var tone = sin(phase)
                    if p.square {
                        // Band-limited square wave: odd harmonics at 1/k.
                        for k in stride(from: 3.0, through: 15, by: 2) where k * p.frequencyHz < sampleRate * 0.47 { tone += sin(k * phase) / k }
                    } else {
                        for k in [3.0, 5.0] where k * p.frequencyHz < sampleRate * 0.47 { tone += p.harmonicLevel / k * 2 * sin(k * phase) }
                    }
                    let edge = min(1, Double(n) / ramp, Double(total - n) / ramp)
                    samples[first + n] = Float(tone * edge)
                }
            }
            cycleStart += cycleSeconds
        }
        return AlertSound(
            alertClass: .smokeAlarm, variant: p.pattern.rawValue,
            description: String(format: "smoke/CO alarm, %@, %.0f Hz%@", p.pattern.rawValue, p.frequencyHz, p.square ? " square" : ""),
            sampleRate: sampleRate, samples: normalized(samples))
    }

    // MARK: Car horns

    public struct CarHornParameters: Sendable {
        /// One note, or two (most cars sound a high and a low horn together).
        public var notesHz: [Double]
        /// (start, length) of each honk.
        public var honks: [(Double, Double)]
        public var rolloff: Double

        public init(notesHz: [Double], honks: [(Double, Double)], rolloff: Double) {
            (self.notesHz, self.honks, self.rolloff) = (notesHz, honks, rolloff)
        }

        static func random(using random: inout SeededRandom) -> CarHornParameters {
            let low = Double.random(in: 330...520, using: &random)
            let notes = Bool.random(using: &random) ? [low] : [low, low * .random(in: 1.18...1.3, using: &random)]
            var honks: [(Double, Double)] = []
            var t = 0.1
            for _ in 0..<Int.random(in: 1...3, using: &random) {
                let length = Double.random(in: 0.12...1.5, using: &random)
                honks.append((t, length))
                t += length + .random(in: 0.1...0.4, using: &random)
            }
            return CarHornParameters(notesHz: notes, honks: honks, rolloff: .random(in: 0.5...1.2, using: &random))
        }
    }

    public static func carHorn(_ p: CarHornParameters, sampleRate: Double) -> AlertSound {
        let end = p.honks.map { $0.0 + $0.1 }.max() ?? 0
        let count = Int((end + 0.1) * sampleRate)
        var samples = [Float](repeating: 0, count: count)
        let ramp = 0.01 * sampleRate
        for (start, length) in p.honks {
            let first = Int(start * sampleRate), total = Int(length * sampleRate)
            for n in 0..<total where first + n < count {
                let t = Double(n) / sampleRate
                var value = 0.0
                // A vibrating diaphragm: a buzzy, harmonic-rich tone per note.
                for f in p.notesHz {
                    for k in 1...20 where Double(k) * f < sampleRate * 0.47 {
                        value += sin(2 * Double.pi * Double(k) * f * t) * pow(Double(k), -p.rolloff)
                    }
                }
                let edge = min(1, Double(n) / ramp, Double(total - n) / ramp)
                samples[first + n] = Float(value * edge)
            }
        }
        let notes = p.notesHz.map { String(format: "%.0f", $0) }.joined(separator: "+")
        return AlertSound(
            alertClass: .carHorn, variant: p.notesHz.count == 1 ? "single" : "dual",
            description: "car horn \(notes) Hz, \(p.honks.count) honk(s)", sampleRate: sampleRate, samples: normalized(samples))
    }

    // MARK: Doorbells

    public enum DoorbellParameters: Sendable {
        /// Struck bars: each note a decaying tone with the inharmonic partials of a bar.
        case chime(notesHz: [Double], gapSeconds: Double, decaySeconds: Double)
        /// An electronic melody of short beeps.
        case melody(notesHz: [Double], noteSeconds: Double)
        /// A buzzer: a low, rough tone.
        case buzzer(frequencyHz: Double, seconds: Double)

        static func random(using random: inout SeededRandom) -> DoorbellParameters {
            let base = Double.random(in: 440...1000, using: &random)
            switch Int.random(in: 0..<3, using: &random) {
            case 0:
                // Ding-dong: down a major or minor third, or a fourth.
                let intervals: [Double] = [1.25, 1.2, 4.0 / 3]  // major third, minor third, fourth
                let interval = intervals.randomElement(using: &random)!
                let notes = Bool.random(using: &random) ? [base, base / interval] : [base, base / interval, base, base / interval]
                return .chime(notesHz: notes, gapSeconds: .random(in: 0.35...0.8, using: &random), decaySeconds: .random(in: 0.3...0.9, using: &random))
            case 1:
                let scale: [Double] = [1, 1.125, 1.25, 4.0 / 3, 1.5, 5.0 / 3, 1.875, 2]  // a just major scale
                let notes = (0..<Int.random(in: 3...8, using: &random)).map { _ in base * scale.randomElement(using: &random)! }
                return .melody(notesHz: notes, noteSeconds: .random(in: 0.12...0.35, using: &random))
            default:
                return .buzzer(frequencyHz: .random(in: 90...260, using: &random), seconds: .random(in: 0.5...2, using: &random))
            }
        }
    }

    public static func doorbell(_ p: DoorbellParameters, sampleRate: Double) -> AlertSound {
        var samples: [Float]
        let variant: String, description: String
        switch p {
        case .chime(let notes, let gap, let decay):
            let count = Int((Double(notes.count - 1) * gap + 4 * decay + 0.2) * sampleRate)
            samples = [Float](repeating: 0, count: count)
            for (index, f) in notes.enumerated() {
                let first = Int(Double(index) * gap * sampleRate)
                for n in 0..<(count - first) {
                    let t = Double(n) / sampleRate
                    let attack = min(1, t / 0.002)
                    // A struck bar's partials: 1, 2.76 and 5.40 times the fundamental, the upper ones dying faster.
                    var value = sin(2 * Double.pi * f * t) * exp(-t / decay)
                    if 2.76 * f < sampleRate * 0.47 { value += 0.35 * sin(2 * Double.pi * 2.76 * f * t) * exp(-t / (decay / 3)) }
                    if 5.40 * f < sampleRate * 0.47 { value += 0.15 * sin(2 * Double.pi * 5.40 * f * t) * exp(-t / (decay / 6)) }
                    samples[first + n] += Float(attack * value)
                }
            }
            variant = notes.count == 2 ? "ding_dong" : "chime"
            description = "doorbell chime " + notes.map { String(format: "%.0f", $0) }.joined(separator: "/") + " Hz"
        case .melody(let notes, let length):
            let noteCount = Int(length * sampleRate)
            samples = [Float](repeating: 0, count: noteCount * notes.count + Int(0.1 * sampleRate))
            let ramp = 0.005 * sampleRate
            for (index, f) in notes.enumerated() {
                for n in 0..<noteCount {
                    let t = Double(n) / sampleRate
                    let edge = min(1, Double(n) / ramp, Double(noteCount - n) / ramp) * exp(-t / (length * 2))
                    samples[index * noteCount + n] = Float(edge * (sin(2 * Double.pi * f * t) + 0.2 * sin(6 * Double.pi * f * t)))
                }
            }
            variant = "melody"
            description = "electronic doorbell melody of \(notes.count) notes"
        case .buzzer(let f, let seconds):
            let count = Int(seconds * sampleRate)
            let ramp = 0.01 * sampleRate
            samples = (0..<count).map { n in
                let t = Double(n) / sampleRate
                var value = 0.0
                for k in 1...30 where Double(k) * f < sampleRate * 0.47 { value += sin(2 * Double.pi * Double(k) * f * t) / Double(k) }
                return Float(value * min(1, Double(n) / ramp, Double(count - n) / ramp))
            }
            variant = "buzzer"
            description = String(format: "doorbell buzzer %.0f Hz", f)
        }
        return AlertSound(alertClass: .doorbell, variant: variant, description: description, sampleRate: sampleRate, samples: normalized(samples))
    }

    static func normalized(_ x: [Float]) -> [Float] {
        let peak = x.reduce(Float(0)) { max($0, abs($1)) }
        return peak > 0 ? x.map { $0 * 0.9 / peak } : x
    }
}
