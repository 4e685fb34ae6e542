import EarshotCore
import Foundation

/// Left or right.
public enum Ear: String, Codable, Sendable, CaseIterable {
    case left, right

    public var other: Ear { self == .left ? .right : .left }
}

/// The earphones a test is given through, with the reference equivalent threshold sound
/// pressure levels (RETSPL) of their standard: the dB SPL, in the standard's coupler or ear
/// simulator, of a tone at 0 dB HL.
public enum Transducer: String, Codable, Sendable, SnakeCaseValue {
    public init?(rawValue: String) {
        guard let value = Self.named(rawValue) else { return nil }
        self = value
    }

    /// Supra-aural (Telephonics TDH 39 in an IEC 60318-3 coupler), ISO 389-1.
    case supraAural = "supra_aural"
    /// Insert earphones (Etymotic ER-3A in an IEC 60318-4 occluded-ear simulator), ISO 389-2.
    case insert
    /// Circumaural (Sennheiser HDA 200 in an IEC 60318-1 ear simulator), ISO 389-8, with the
    /// extended high frequencies of ISO 389-5.
    case circumaural

    /// RETSPL in dB re 20 µPa at each audiometric frequency, as the standards tabulate them.
    public var referenceThresholds: [Double: Double] {
        switch self {
        case .supraAural:
            [125: 45.0, 250: 25.5, 500: 11.5, 750: 8.0, 1000: 7.0, 1500: 6.5, 2000: 9.0,
             3000: 10.0, 4000: 9.5, 6000: 15.5, 8000: 13.0]
        case .insert:
            [125: 28.0, 250: 17.5, 500: 9.5, 750: 6.0, 1000: 5.5, 1500: 9.5, 2000: 11.5,
             3000: 13.0, 4000: 15.0, 6000: 16.0, 8000: 15.5]
        case .circumaural:
            [125: 30.5, 250: 18.0, 500: 11.0, 750: 6.0, 1000: 5.5, 1500: 5.5, 2000: 4.5,
             3000: 2.5, 4000: 9.5, 6000: 17.0, 8000: 17.5,
             9000: 18.5, 10_000: 22.5, 11_200: 23.0, 12_500: 28.0, 14_000: 36.0, 16_000: 56.0]
        }
    }

    /// How much a tone loses crossing the head to the other ear (conservative clinical values).
    public var interauralAttenuationDB: Double {
        switch self {
        case .supraAural, .circumaural: 40
        case .insert: 55
        }
    }

    /// The loudest sound pressure this transducer is ever driven to, in dB SPL.
    public var safeMaximumSPL: Double {
        switch self {
        case .supraAural: 125
        case .insert: 120
        case .circumaural: 120
        }
    }

    public var frequencies: [Double] { referenceThresholds.keys.sorted() }

    public func retspl(atHz frequency: Double) throws -> Double {
        guard let value = referenceThresholds[frequency] else {
            throw AudiometryError.noReferenceThreshold(transducer: rawValue, hz: frequency, standardHz: frequencies)
        }
        return value
    }
}

/// The audiometric frequencies in Hz.
public enum AudiometricFrequencies {
    /// The usual test: octaves from 250 Hz to 8 kHz with the half-octaves 3 and 6 kHz.
    public static let standard: [Double] = [250, 500, 1000, 2000, 3000, 4000, 6000, 8000]
    /// Every frequency from 125 Hz to 8 kHz that the standards define.
    public static let full: [Double] = [125, 250, 500, 750, 1000, 1500, 2000, 3000, 4000, 6000, 8000]
    /// The extended high frequencies (circumaural earphones only).
    public static let extended: [Double] = [9000, 10_000, 11_200, 12_500, 14_000, 16_000]
}

/// How loud one particular sound card, volume setting and pair of earphones play: the dB SPL a
/// full-scale sine produces, per ear and frequency, measured with a sound level meter and
/// coupler — or derived from a normal-hearing listener (a "biological" calibration).
public struct CalibrationProfile: Codable, Equatable, Sendable {
    public var name: String
    public var transducer: Transducer
    /// dB SPL of a 0 dBFS sine, by ear, keyed by frequency in Hz (as strings, for JSON).
    public var fullScaleSPL: [Ear: [String: Double]]
    /// "measured" or "biological".
    public var method: String

    public init(name: String, transducer: Transducer, fullScaleSPL: [Ear: [Double: Double]], method: String = "measured") {
        self.name = name
        self.transducer = transducer
        self.fullScaleSPL = fullScaleSPL.mapValues { Dictionary(uniqueKeysWithValues: $0.map { (Self.key($0.key), $0.value) }) }
        self.method = method
    }

    /// A biological calibration: a listener with normal hearing found their threshold at these
    /// digital levels (dBFS); by definition those levels are 0 dB HL for them.
    public static func biological(name: String, transducer: Transducer, thresholdsDBFS: [Ear: [Double: Double]]) throws -> CalibrationProfile {
        var spl: [Ear: [Double: Double]] = [:]
        for (ear, table) in thresholdsDBFS {
            for (frequency, dbfs) in table {
                spl[ear, default: [:]][frequency] = try transducer.retspl(atHz: frequency) - dbfs
            }
        }
        return CalibrationProfile(name: name, transducer: transducer, fullScaleSPL: spl, method: "biological")
    }

    /// From sound-level-meter readings: dB SPL of a full-scale sine at each frequency, read in
    /// the transducer's coupler, the same for each of `ears`.
    public static func measured(name: String, transducer: Transducer, fullScaleSPL: [Double: Double], ears: [Ear]) throws -> CalibrationProfile {
        for frequency in fullScaleSPL.keys { _ = try transducer.retspl(atHz: frequency) }
        return CalibrationProfile(name: name, transducer: transducer, fullScaleSPL: Dictionary(uniqueKeysWithValues: ears.map { ($0, fullScaleSPL) }))
    }

    /// This profile with `other`'s measurements added (another ear, more frequencies), its
    /// values winning where both have one.
    public func adding(_ other: CalibrationProfile) throws -> CalibrationProfile {
        try requireTransducer(other.transducer)
        var merged = self
        for (ear, table) in other.fullScaleSPL { merged.fullScaleSPL[ear, default: [:]].merge(table) { _, new in new } }
        return merged
    }

    /// Refuses a profile made for other earphones than those in use.
    public func requireTransducer(_ transducer: Transducer) throws {
        guard self.transducer == transducer else {
            throw AudiometryError.otherTransducer(profile: name, madeFor: self.transducer.rawValue, inUse: transducer.rawValue)
        }
    }

    /// A nominal profile for simulations and protocol-only tests: every full-scale sine at
    /// 110 dB SPL. Never for real listeners.
    public static func nominal(transducer: Transducer) -> CalibrationProfile {
        let table = Dictionary(uniqueKeysWithValues: transducer.frequencies.map { ($0, 110.0) })
        return CalibrationProfile(name: "nominal (uncalibrated)", transducer: transducer,
                                  fullScaleSPL: [.left: table, .right: table], method: "nominal")
    }

    public static func load(path: String) throws -> CalibrationProfile {
        guard let data = FileManager.default.contents(atPath: path) else { throw EarshotError.fileNotFound(path: path) }
        do {
            return try JSONDecoder().decode(CalibrationProfile.self, from: data)
        } catch {
            throw AudiometryError.notACalibrationProfile(path: path, reason: error.localizedDescription)
        }
    }

    public func save(path: String) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try AtomicFile.write(try encoder.encode(self), to: path)
    }

    /// dB SPL of a full-scale sine at `frequency` in `ear`; nil where the profile has no measurement.
    public func fullScale(_ ear: Ear, atHz frequency: Double) -> Double? {
        fullScaleSPL[ear]?[Self.key(frequency)]
    }

    private static func key(_ frequency: Double) -> String { String(Int(frequency.rounded())) }
}

/// Turns hearing levels into digital levels and keeps every tone under the output cap.
public struct Calibration: Sendable {
    public let profile: CalibrationProfile
    /// No tone is ever played louder than this (and never above the transducer's safe maximum).
    public let capDBHL: Double

    public static let defaultCapDBHL = 100.0

    public init(profile: CalibrationProfile, capDBHL: Double = Calibration.defaultCapDBHL) throws {
        guard capDBHL.isFinite, capDBHL >= 0, capDBHL <= 120 else {
            throw AudiometryError.capOutOfRange(dBHL: capDBHL)
        }
        self.profile = profile
        self.capDBHL = capDBHL
    }

    public var transducer: Transducer { profile.transducer }

    /// The loudest level allowed at this ear and frequency: the cap, the transducer's safe
    /// maximum, and what the hardware can reach at full scale, whichever is lowest.
    public func maximumDBHL(_ ear: Ear, atHz frequency: Double) throws -> Double {
        let retspl = try transducer.retspl(atHz: frequency)
        guard let fullScale = profile.fullScale(ear, atHz: frequency) else {
            throw AudiometryError.notMeasured(profile: profile.name, ear: ear, hz: frequency)
        }
        return min(capDBHL, transducer.safeMaximumSPL - retspl, fullScale - retspl)
    }

    /// The digital level (dBFS, peak of the sine) that plays `levelDBHL`; refuses anything
    /// above `maximumDBHL`.
    public func digitalLevel(_ ear: Ear, atHz frequency: Double, levelDBHL: Double) throws -> Double {
        let maximum = try maximumDBHL(ear, atHz: frequency)
        guard levelDBHL <= maximum + 1e-9 else {
            throw AudiometryError.aboveMaximum(dBHL: levelDBHL, hz: frequency, maximumDBHL: maximum)
        }
        let spl = levelDBHL + (try transducer.retspl(atHz: frequency))
        return spl - profile.fullScale(ear, atHz: frequency)!
    }
}
