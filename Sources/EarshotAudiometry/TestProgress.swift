import Foundation

/// How far a test has come, in the words a listener follows: "ear 1 of 2, tone 3 of 7", and
/// about how long is left.
public struct TestProgress: Codable, Equatable, Sendable {
    public var ear: Ear
    public var earNumber: Int
    public var ears: Int
    public var toneNumber: Int
    public var tones: Int
    public var turn: Int
    /// An estimate: the turns still to come (at a simulated listener's pace at first, then at
    /// this listener's), at the length of a turn.
    public var secondsLeft: Double
}

/// Follows a test's stimuli to say how far it has come. The expected length comes from running
/// the same procedure with a simulated listener with a mild loss, so it follows the procedure's
/// own rules (catch trials, retests) rather than a guess per procedure.
public struct ProgressTracker: Sendable {
    /// A tone, a random pause before it and an answer: what one turn takes on average.
    public static let secondsPerTurn = 3.2

    public let expectedTurns: Int
    private let plan: TestPlan
    private var earsStarted: [Ear] = []
    private var tonesStarted: [Ear: [Double]] = [:]
    private var turns = 0

    public init(procedure: ProcedureKind, plan: TestPlan) {
        self.plan = plan
        expectedTurns = Self.simulatedTurns(procedure: procedure, plan: plan)
    }

    /// The progress once `stimulus` is presented.
    public mutating func advance(to stimulus: Stimulus) -> TestProgress {
        turns += 1
        let ear = stimulus.tone.ear
        if !earsStarted.contains(ear) { earsStarted.append(ear) }
        if !(tonesStarted[ear] ?? []).contains(stimulus.tone.frequencyHz) { tonesStarted[ear, default: []].append(stimulus.tone.frequencyHz) }
        // Projected from this listener's own pace once two tones have begun (the one under way
        // counts half done), from the simulated listener's before.
        let tones = plan.ears.count * plan.frequencies.count, started = tonesStarted.values.reduce(0) { $0 + $1.count }
        let projected = started >= 2 ? Double(turns) * Double(tones) / (Double(started) - 0.5) : Double(expectedTurns)
        let turnsLeft = max(1, projected - Double(turns))
        return TestProgress(ear: ear, earNumber: earsStarted.firstIndex(of: ear)! + 1, ears: plan.ears.count,
                            toneNumber: min(tonesStarted[ear]!.count, plan.frequencies.count), tones: plan.frequencies.count,
                            turn: turns, secondsLeft: (turnsLeft * Self.secondsPerTurn).rounded())
    }

    /// The turns `procedure` takes with a listener whose thresholds are 25 dB HL everywhere.
    static func simulatedTurns(procedure: ProcedureKind, plan: TestPlan) -> Int {
        let levels = Dictionary(uniqueKeysWithValues: plan.frequencies.map { ($0, 25.0) })
        var listener = SimulatedListener(name: "typical", thresholds: [.left: levels, .right: levels], falseAlarmRate: 0.05, seed: 1)
        let session = TestSession(procedure: procedure.make(plan: plan, seed: 1), transducer: .supraAural, seed: 1)
        var turns = 0
        while turns < 5000, let stimulus = session.next() {
            turns += 1
            try? session.respond(id: stimulus.id, answer: listener.answer(stimulus))
        }
        return turns
    }
}
