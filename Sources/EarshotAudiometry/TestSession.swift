import EarshotCore
import Foundation

/// What a front end presents: a tone, or a silent catch trial (`tone.ear` is then meaningless
/// and `isCatchTrial` true; the frequency and level are those of the tone it stands in for,
/// so nothing on screen gives it away).
public struct Stimulus: Equatable, Sendable {
    public var id: Int
    public var tone: Tone
    public var isCatchTrial: Bool

    public init(id: Int, tone: Tone, isCatchTrial: Bool) {
        (self.id, self.tone, self.isCatchTrial) = (id, tone, isCatchTrial)
    }
}

/// How the listener behaved, with plain-language flags when a result should not be trusted.
public struct Reliability: Codable, Equatable, Sendable {
    public var catchTrials: Int
    public var falseAlarms: Int
    public var falseAlarmRate: Double?
    public var heardAnswers: Int
    /// Answers naming the ear the tone was not in that cross-hearing cannot explain.
    public var wrongEarAnswers: Int
    public var wrongEarRate: Double?
    public var retestDifferenceDB: Double?
    public var responseTimeOutliers: Int
    public var flags: [String]
    /// Observations that do not make the result unreliable but matter to its reader.
    public var notes: [String]

    public var isReliable: Bool { flags.isEmpty }
}

/// Everything a finished test produced.
public struct TestResult: Codable, Equatable, Sendable {
    public var procedure: String
    public var transducer: Transducer
    public var thresholds: [ThresholdResult]
    /// Tones played (catch trials are counted separately, in `reliability`).
    public var presentations: Int
    public var reliability: Reliability
}

/// Runs any procedure: numbers the stimuli, slips in silent catch trials, keeps the score of
/// the listener's reliability and assembles the result.
///
/// Catch trials follow a sequential probability ratio test between a reliable listener (says
/// "heard" to 5 % of silences) and an unreliable one (20 %), each error kept under 4 %: one in
/// five presentations is a catch trial until the test decides, one in twenty after; a test
/// that ends undecided adds catch trials until it decides (at most 60 in all — separating 5 %
/// from 20 % can take that many for a listener near either).
public final class TestSession {
    public private(set) var procedure: any ThresholdProcedure
    public let transducer: Transducer
    private var random: SeededRandom
    private var nextID = 1
    private var outstanding: Stimulus?
    private var pendingTone: Tone?
    private var history: [(stimulus: Stimulus, answer: Answer, seconds: Double?)] = []
    private var evidence = 0.0  // log-likelihood ratio: unreliable vs reliable

    static let reliableRate = 0.05, unreliableRate = 0.2
    static let flagBound = log(0.96 / 0.04), clearBound = log(0.04 / 0.96)
    static let maximumCatchTrials = 60

    public init(procedure: any ThresholdProcedure, transducer: Transducer, seed: UInt64) {
        self.procedure = procedure
        self.transducer = transducer
        random = SeededRandom(seed: seed &+ 0x5EED)
    }

    private var catchTrials: [(stimulus: Stimulus, answer: Answer, seconds: Double?)] { history.filter { $0.stimulus.isCatchTrial } }
    private var decided: Bool { evidence >= Self.flagBound || evidence <= Self.clearBound }

    /// The next stimulus, or nil when the test is over. Until it is answered, the same one.
    public func next() -> Stimulus? {
        if let outstanding { return outstanding }
        let catchCount = catchTrials.count
        if pendingTone == nil { pendingTone = procedure.nextTone() }
        let stimulus: Stimulus
        if let tone = pendingTone {
            let catchProbability = catchCount >= Self.maximumCatchTrials ? 0 : (decided ? 0.05 : 0.2)
            stimulus = Stimulus(id: nextID, tone: tone, isCatchTrial: Double.random(in: 0..<1, using: &random) < catchProbability)
        } else if !decided && catchCount < Self.maximumCatchTrials, let last = history.last {
            stimulus = Stimulus(id: nextID, tone: last.stimulus.tone, isCatchTrial: true)
        } else {
            return nil
        }
        nextID += 1
        outstanding = stimulus
        return stimulus
    }

    /// Records the answer to stimulus `id`; `responseSeconds` is how long the listener took.
    public func respond(id: Int, answer: Answer, responseSeconds: Double? = nil) throws {
        guard let stimulus = outstanding else {
            throw AudiometryError.noStimulusWaiting
        }
        guard stimulus.id == id else {
            throw AudiometryError.answerForAnother(answered: id, waiting: stimulus.id)
        }
        outstanding = nil
        history.append((stimulus, answer, responseSeconds))
        if stimulus.isCatchTrial {
            evidence += answer == .notHeard
                ? log((1 - Self.unreliableRate) / (1 - Self.reliableRate)) : log(Self.unreliableRate / Self.reliableRate)
            let catches = catchTrials
            let falseAlarms = catches.filter { $0.answer != .notHeard }.count
            procedure.assumeFalseAlarmRate((Double(falseAlarms) + 0.1) / (Double(catches.count) + 5))
        } else if let tone = pendingTone {
            procedure.record(answer, to: tone)
            pendingTone = nil
        }
    }

    public var result: TestResult {
        let tones = history.filter { !$0.stimulus.isCatchTrial }
        return TestResult(
            procedure: procedure.name, transducer: transducer, thresholds: procedure.results,
            presentations: tones.count, reliability: reliability())
    }

    private func reliability() -> Reliability {
        let catches = catchTrials
        let falseAlarms = catches.filter { $0.answer != .notHeard }.count
        let tones = history.filter { !$0.stimulus.isCatchTrial }
        let heard = tones.filter { $0.answer != .notHeard }
        let thresholds = procedure.results
        func threshold(_ ear: Ear, _ frequency: Double) -> Double? {
            thresholds.first { $0.ear == ear && $0.frequencyHz == frequency }?.thresholdDBHL
        }
        // A wrong ear is explained when the tone could have crossed the head and been heard there.
        let attenuation = transducer.interauralAttenuationDB
        let wrongEar = heard.filter { entry in
            guard case .heard(let named) = entry.answer, named != entry.stimulus.tone.ear else { return false }
            let other = threshold(named, entry.stimulus.tone.frequencyHz) ?? -10
            return entry.stimulus.tone.levelDBHL - attenuation < other - 10
        }
        var flags: [String] = []
        var notes: [String] = []
        // Tones 15 dB or more below the threshold found are inaudible whatever the listener's
        // psychometric slope: to the reliability test they are silent trials too.
        let inaudible = tones.filter { entry in
            threshold(entry.stimulus.tone.ear, entry.stimulus.tone.frequencyHz).map { entry.stimulus.tone.levelDBHL <= $0 - 15 } ?? false
        }
        let inaudibleHeard = inaudible.filter { $0.answer != .notHeard }.count
        let finalEvidence = evidence + Double(inaudibleHeard) * log(Self.unreliableRate / Self.reliableRate)
            + Double(inaudible.count - inaudibleHeard) * log((1 - Self.unreliableRate) / (1 - Self.reliableRate))
        if finalEvidence >= Self.flagBound || (finalEvidence > 0 && evidence > Self.clearBound) {
            var flag = "unreliable: responded to \(falseAlarms) of \(catches.count) silent trials"
            if inaudibleHeard > 0 { flag += " and to \(inaudibleHeard) of \(inaudible.count) tones far below threshold" }
            flags.append(flag)
        }
        if heard.count >= 6 && Double(wrongEar.count) > 0.2 * Double(heard.count) {
            flags.append("unreliable: named the wrong ear \(wrongEar.count) times in \(heard.count) answers — are the earphones on the right ears?")
        }
        let retest = procedure.retestDifferenceDB
        if let retest, abs(retest) > procedure.retestToleranceDB {
            flags.append("unreliable: the 1 kHz retest differs by \(Int(abs(retest).rounded())) dB")
        }
        let times = tones.compactMap(\.seconds).sorted()
        var outliers = 0
        if times.count >= 8 {
            let median = times[times.count / 2]
            outliers = times.filter { $0 > 3 * median || $0 < 0.15 }.count
            if Double(outliers) > 0.2 * Double(times.count) {
                flags.append("unreliable: \(outliers) of \(times.count) answers came unusually fast or slow")
            }
        }
        for frequency in Set(thresholds.map(\.frequencyHz)).sorted() {
            if let l = threshold(.left, frequency), let r = threshold(.right, frequency), abs(l - r) >= attenuation {
                notes.append("\(Int(frequency)) Hz: the ears differ by \(Int(abs(l - r))) dB, beyond the \(Int(attenuation)) dB the head attenuates — the poorer ear needs a masked retest")
            }
        }
        return Reliability(
            catchTrials: catches.count, falseAlarms: falseAlarms,
            falseAlarmRate: catches.isEmpty ? nil : Double(falseAlarms) / Double(catches.count),
            heardAnswers: heard.count, wrongEarAnswers: wrongEar.count,
            wrongEarRate: heard.isEmpty ? nil : Double(wrongEar.count) / Double(heard.count),
            retestDifferenceDB: retest, responseTimeOutliers: outliers, flags: flags, notes: notes)
    }
}
