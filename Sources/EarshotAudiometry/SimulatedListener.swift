import EarshotCore
import Foundation

/// A listener made of numbers, for tests and benchmarks: true thresholds per ear and frequency,
/// a psychometric function of given spread, false alarms, lapses, and cross-hearing — a loud
/// tone in one ear reaches the other, weakened by the interaural attenuation, and the listener
/// names whichever ear it sounds louder in.
public struct SimulatedListener: Sendable {
    public var name: String
    /// True thresholds (the 50 % point), dB HL, by ear and frequency.
    public var thresholds: [Ear: [Double: Double]]
    /// Standard deviation of the psychometric function's cumulative normal, dB.
    public var spreadDB: Double
    /// Chance of answering "heard" when nothing was heard.
    public var falseAlarmRate: Double
    /// Chance of missing a clearly audible tone.
    public var lapseRate: Double
    public var interauralAttenuationDB: Double
    private var random: SeededRandom

    public init(name: String, thresholds: [Ear: [Double: Double]], spreadDB: Double = 3, falseAlarmRate: Double = 0,
                lapseRate: Double = 0.01, interauralAttenuationDB: Double = 40, seed: UInt64) {
        self.name = name
        self.thresholds = thresholds
        self.spreadDB = spreadDB
        self.falseAlarmRate = falseAlarmRate
        self.lapseRate = lapseRate
        self.interauralAttenuationDB = interauralAttenuationDB
        random = SeededRandom(seed: seed)
    }

    /// The true threshold, interpolated linearly over log frequency between tabulated ones.
    public func threshold(_ ear: Ear, _ frequency: Double) -> Double {
        let table = thresholds[ear]!.sorted { $0.key < $1.key }
        if let exact = thresholds[ear]![frequency] { return exact }
        guard let upper = table.firstIndex(where: { $0.key > frequency }) else { return table.last!.value }
        guard upper > 0 else { return table[0].value }
        let (f0, t0) = table[upper - 1], (f1, t1) = table[upper]
        let x = log(frequency / f0) / log(f1 / f0)
        return t0 + x * (t1 - t0)
    }

    public mutating func answer(_ stimulus: Stimulus) -> Answer {
        let guess: Answer = Bool.random(using: &random) ? .heard(.left) : .heard(.right)
        if stimulus.isCatchTrial {
            return Double.random(in: 0..<1, using: &random) < falseAlarmRate ? guess : .notHeard
        }
        let tone = stimulus.tone
        let direct = tone.levelDBHL - threshold(tone.ear, tone.frequencyHz)
        let crossed = tone.levelDBHL - interauralAttenuationDB - threshold(tone.ear.other, tone.frequencyHz)
        func detected(_ sensation: Double) -> Bool {
            Double.random(in: 0..<1, using: &random) < 0.5 * erfc(-sensation / (spreadDB * 2.0.squareRoot()))
        }
        let inTestEar = detected(direct), inOtherEar = detected(crossed)
        if Double.random(in: 0..<1, using: &random) < lapseRate { return .notHeard }
        switch (inTestEar, inOtherEar) {
        case (true, true): return .heard(direct >= crossed ? tone.ear : tone.ear.other)
        case (true, false): return .heard(tone.ear)
        case (false, true): return .heard(tone.ear.other)
        case (false, false): return Double.random(in: 0..<1, using: &random) < falseAlarmRate ? guess : .notHeard
        }
    }
}

/// The kinds of listener a benchmark population is drawn from.
public enum ListenerProfile: String, CaseIterable, Sendable {
    case normal, slopingHighFrequency = "sloping", flat, asymmetric, noisyResponder = "noisy"

    /// A random listener of this kind; `frequencies` are those the thresholds are drawn at.
    public func make(seed: UInt64, frequencies: [Double], interauralAttenuationDB: Double) -> SimulatedListener {
        var random = SeededRandom(seed: seed)
        func gaussian(_ mean: Double, _ sd: Double) -> Double { mean + sd * random.nextGaussian() }
        func audiogram(_ shape: (Double) -> Double) -> [Double: Double] {
            Dictionary(uniqueKeysWithValues: frequencies.map { f in (f, min(100, max(-10, shape(f) + gaussian(0, 3)))) })
        }
        let octave = { (f: Double) in log2(f / 1000) }
        // Reliable listeners still say "heard" to silence now and then: up to 5 % of the time.
        var falseAlarm = Double.random(in: 0...0.05, using: &random), spread = gaussian(3, 0.7), lapse = 0.01
        var left: [Double: Double], right: [Double: Double]
        switch self {
        case .normal:
            let base = gaussian(5, 4)
            left = audiogram { _ in base }
            right = audiogram { _ in base }
        case .slopingHighFrequency:
            let base = gaussian(15, 5), slope = gaussian(15, 4)
            let shape = { (f: Double) in base + max(0, octave(f)) * slope }
            left = audiogram(shape)
            right = audiogram(shape)
        case .flat:
            let base = gaussian(45, 10)
            left = audiogram { _ in base }
            right = audiogram { _ in base }
        case .asymmetric:
            let base = gaussian(15, 5), gap = gaussian(30, 8)
            let better = audiogram { _ in base }, worse = audiogram { _ in base + gap }
            (left, right) = Bool.random(using: &random) ? (better, worse) : (worse, better)
        case .noisyResponder:
            let base = gaussian(15, 8)
            left = audiogram { _ in base }
            right = audiogram { _ in base }
            falseAlarm = Double.random(in: 0.2...0.4, using: &random)
            spread = gaussian(5, 1)
            lapse = 0.05
        }
        return SimulatedListener(
            name: rawValue, thresholds: [.left: left, .right: right], spreadDB: max(1, spread),
            falseAlarmRate: falseAlarm, lapseRate: lapse, interauralAttenuationDB: interauralAttenuationDB, seed: seed &+ 17)
    }
}

/// Runs a whole test with a simulated listener answering.
public func simulateTest(
    procedure kind: ProcedureKind, listener: inout SimulatedListener, plan: TestPlan, transducer: Transducer, seed: UInt64
) throws -> TestResult {
    let session = TestSession(procedure: kind.make(plan: plan, seed: seed), transducer: transducer, seed: seed)
    var guardCount = 0
    while let stimulus = session.next() {
        try session.respond(id: stimulus.id, answer: listener.answer(stimulus))
        guardCount += 1
        if guardCount > 5000 { throw EarshotError.internalFailure("the test did not end after 5000 stimuli") }
    }
    return session.result
}
