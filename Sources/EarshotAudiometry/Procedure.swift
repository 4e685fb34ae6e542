import EarshotCore
import Foundation

/// One tone: where, how high, how loud.
public struct Tone: Equatable, Sendable, Codable {
    public var ear: Ear
    public var frequencyHz: Double
    public var levelDBHL: Double

    public init(ear: Ear, frequencyHz: Double, levelDBHL: Double) {
        (self.ear, self.frequencyHz, self.levelDBHL) = (ear, frequencyHz, levelDBHL)
    }
}

/// What the listener said: heard it in one ear, or heard nothing.
public enum Answer: Equatable, Sendable {
    case heard(Ear)
    case notHeard

    /// Heard in the ear it was played to.
    public func detects(_ tone: Tone) -> Bool { self == .heard(tone.ear) }

    /// Heard at all. Conventional (unmasked) audiometry scores any response: a loud tone in a
    /// poor ear may be heard, and named, in the other ear — cross-hearing, which no procedure
    /// can see past without masking noise. Scoring it as heard gives the unmasked threshold
    /// (never worse than the better ear plus the interaural attenuation), and the session notes
    /// where a masked retest is needed; scoring it as a miss would report no response at all.
    public var isHeard: Bool { self != .notHeard }
}

/// A threshold found for one ear and frequency.
public struct ThresholdResult: Codable, Equatable, Sendable {
    public var ear: Ear
    public var frequencyHz: Double
    /// nil when there was no response up to the loudest level allowed.
    public var thresholdDBHL: Double?
    /// Set when nothing was heard: the loudest level tried.
    public var noResponseAtDBHL: Double?
    public var presentations: Int

    public init(ear: Ear, frequencyHz: Double, thresholdDBHL: Double?, noResponseAtDBHL: Double?, presentations: Int) {
        self.ear = ear
        self.frequencyHz = frequencyHz
        self.thresholdDBHL = thresholdDBHL
        self.noResponseAtDBHL = noResponseAtDBHL
        self.presentations = presentations
    }
}

extension Array where Element == ThresholdResult {
    /// The threshold found in `ear` at the frequency closest (in octaves) to `frequency`.
    func nearestFound(_ ear: Ear, to frequency: Double) -> (frequencyHz: Double, thresholdDBHL: Double)? {
        filter { $0.ear == ear && $0.thresholdDBHL != nil }
            .min { abs(log2($0.frequencyHz / frequency)) < abs(log2($1.frequencyHz / frequency)) }
            .map { ($0.frequencyHz, $0.thresholdDBHL!) }
    }

    /// Books a finished run: a first test is appended; a retest adds its presentations to the
    /// first test's and returns retest minus first (nil if either found nothing).
    mutating func record(
        _ ear: Ear, _ frequency: Double, threshold: Double?, presentations: Int, isRetest: Bool, plan: TestPlan
    ) -> Double? {
        guard isRetest else {
            append(ThresholdResult(
                ear: ear, frequencyHz: frequency, thresholdDBHL: threshold,
                noResponseAtDBHL: threshold == nil ? plan.maximum(ear, frequency) : nil, presentations: presentations))
            return nil
        }
        guard let index = firstIndex(where: { $0.ear == ear && $0.frequencyHz == frequency }) else { return nil }
        self[index].presentations += presentations
        guard let first = self[index].thresholdDBHL, let second = threshold else { return nil }
        return second - first
    }
}

/// What every procedure needs to know before it starts.
public struct TestPlan: Sendable {
    public var frequencies: [Double]
    public var ears: [Ear]
    /// Loudest level allowed per ear and frequency (the calibration's cap).
    public var maximumDBHL: [Ear: [Double: Double]]
    public static let minimumDBHL = -10.0

    public init(frequencies: [Double], ears: [Ear] = [.right, .left], maximumDBHL: [Ear: [Double: Double]]) throws {
        guard !frequencies.isEmpty, Set(frequencies).count == frequencies.count else {
            throw AudiometryError.repeatedFrequency
        }
        guard !ears.isEmpty else { throw AudiometryError.noEar }
        for ear in ears {
            for f in frequencies where maximumDBHL[ear]?[f] == nil {
                throw AudiometryError.noLevelLimit(ear: ear, hz: f)
            }
        }
        self.frequencies = frequencies
        self.ears = ears
        self.maximumDBHL = maximumDBHL
    }

    /// A plan whose limits come from a calibration.
    public init(frequencies: [Double], ears: [Ear] = [.right, .left], calibration: Calibration) throws {
        var limits: [Ear: [Double: Double]] = [:]
        for ear in ears {
            for f in frequencies { limits[ear, default: [:]][f] = try calibration.maximumDBHL(ear, atHz: f) }
        }
        try self.init(frequencies: frequencies, ears: ears, maximumDBHL: limits)
    }

    public func maximum(_ ear: Ear, _ frequency: Double) -> Double { maximumDBHL[ear]![frequency]! }

    /// ISO 8253-1 order: 1 kHz, the frequencies above it rising, then those below it falling.
    public var clinicalOrder: [Double] {
        let sorted = frequencies.sorted()
        let pivot = frequencies.contains(1000) ? [1000.0] : []
        return pivot + sorted.filter { $0 > 1000 } + sorted.filter { $0 < 1000 }.reversed()
    }

    /// Clamps a level into the allowed range for this ear and frequency.
    func clamp(_ level: Double, _ ear: Ear, _ frequency: Double) -> Double {
        min(max(level, Self.minimumDBHL), maximum(ear, frequency))
    }
}

/// A way to find thresholds: asked for a tone, told the answer, until it has none to ask.
public protocol ThresholdProcedure {
    var name: String { get }
    /// The next tone, or nil when the test is over. Asking twice without `record` gives the same tone.
    mutating func nextTone() -> Tone?
    mutating func record(_ answer: Answer, to tone: Tone)
    var results: [ThresholdResult] { get }
    /// Retest minus first test at 1 kHz in the first ear, once the retest is done.
    var retestDifferenceDB: Double? { get }
    /// How far the 1 kHz retest may move before the result is called unreliable: about two and
    /// a half times the procedure's own test-retest spread.
    var retestToleranceDB: Double { get }
    /// The session's current estimate of how often this listener says "heard" to silence.
    mutating func assumeFalseAlarmRate(_ rate: Double)
}

extension ThresholdProcedure {
    /// The clinical rule for 5 dB staircases: a retest within 10 dB agrees.
    public var retestToleranceDB: Double { 10 }
    public mutating func assumeFalseAlarmRate(_ rate: Double) {}
}

/// The procedures Earshot offers, by their command-line names.
public enum ProcedureKind: String, SnakeCaseValue, Sendable, Codable {
    public init?(rawValue: String) {
        guard let value = Self.named(rawValue) else { return nil }
        self = value
    }

    case hughsonWestlake = "hughson_westlake"
    case quick
    case bayesian

    public func make(plan: TestPlan, seed: UInt64) -> any ThresholdProcedure {
        switch self {
        case .hughsonWestlake: HughsonWestlake(plan: plan)
        case .quick: QuickProcedure(plan: plan, seed: seed)
        case .bayesian: BayesianProcedure(plan: plan)
        }
    }
}
