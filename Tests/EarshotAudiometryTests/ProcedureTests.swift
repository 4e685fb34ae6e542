import EarshotAudiometry
import EarshotCore
import Foundation
import Testing

func plan(_ frequencies: [Double] = AudiometricFrequencies.standard, maximum: Double = 100) throws -> TestPlan {
    let limits = Dictionary(uniqueKeysWithValues: frequencies.map { ($0, maximum) })
    return try TestPlan(frequencies: frequencies, maximumDBHL: [.left: limits, .right: limits])
}

/// A listener with a perfectly sharp threshold: hears everything at or above it.
struct IdealListener {
    var thresholds: [Ear: Double]
    func answer(_ tone: Tone) -> Answer { tone.levelDBHL >= thresholds[tone.ear]! ? .heard(tone.ear) : .notHeard }
}

@Suite struct ProcedureTests {
    @Test func hughsonWestlakeFollowsTenDownFiveUpAndTwoOfThreeAscending() throws {
        var procedure = HughsonWestlake(plan: try plan([1000], maximum: 100))
        let listener = IdealListener(thresholds: [.right: 32, .left: 32])
        var levels: [Double] = []
        while let tone = procedure.nextTone(), tone.ear == .right, levels.count < 40 {
            levels.append(tone.levelDBHL)
            procedure.record(listener.answer(tone), to: tone)
            if procedure.results.contains(where: { $0.ear == .right }) { break }
        }
        // 40 heard → 30 missed → 35 heard (ascending) → 25 missed → 30 missed → 35 heard (ascending): 2 of 2.
        #expect(levels == [40, 30, 35, 25, 30, 35])
        #expect(procedure.results.first?.thresholdDBHL == 35)
    }

    @Test func hughsonWestlakeOrdersFrequenciesClinically() throws {
        var procedure = HughsonWestlake(plan: try plan([250, 500, 1000, 2000, 4000, 8000]))
        let listener = IdealListener(thresholds: [.right: 20, .left: 20])
        var order: [(Ear, Double)] = []
        while let tone = procedure.nextTone() {
            if order.last.map({ $0.0 != tone.ear || $0.1 != tone.frequencyHz }) ?? true { order.append((tone.ear, tone.frequencyHz)) }
            procedure.record(listener.answer(tone), to: tone)
        }
        #expect(order.map(\.1) == [1000, 2000, 4000, 8000, 1000, 500, 250, 1000, 2000, 4000, 8000, 500, 250])
        #expect(order.prefix(7).allSatisfy { $0.0 == .right } && order.dropFirst(7).allSatisfy { $0.0 == .left })
        #expect(procedure.retestDifferenceDB == 0)
        #expect(procedure.results.allSatisfy { $0.thresholdDBHL == 20 })
    }

    @Test(arguments: ProcedureKind.allCases)
    func everyProcedureFindsASharpThreshold(kind: ProcedureKind) throws {
        var procedure = kind.make(plan: try plan([500, 1000, 4000]), seed: 3)
        let listener = IdealListener(thresholds: [.right: 23, .left: 47])
        var presentations = 0
        while let tone = procedure.nextTone() {
            procedure.record(listener.answer(tone), to: tone)
            presentations += 1
            #expect(presentations < 500)
        }
        #expect(procedure.results.count == 6)
        for result in procedure.results {
            let truth = listener.thresholds[result.ear]!
            let found = try #require(result.thresholdDBHL)
            // A sharp threshold lies between the last level missed and the first heard.
            #expect(found >= truth - 5 && found <= truth + 5, "\(kind.rawValue) \(result.ear) \(result.frequencyHz): \(found)")
        }
    }

    @Test(arguments: ProcedureKind.allCases)
    func nothingHeardMeansNoResponseAtTheLimit(kind: ProcedureKind) throws {
        var procedure = kind.make(plan: try plan([1000], maximum: 70), seed: 1)
        var levels: [Double] = []
        while let tone = procedure.nextTone() {
            levels.append(tone.levelDBHL)
            procedure.record(.notHeard, to: tone)
        }
        #expect(levels.allSatisfy { $0 <= 70 }, "never above the cap")
        #expect(procedure.results.allSatisfy { $0.thresholdDBHL == nil && $0.noResponseAtDBHL == 70 })
    }

    @Test func askingTwiceGivesTheSameTone() throws {
        for kind in ProcedureKind.allCases {
            var procedure = kind.make(plan: try plan([1000, 2000]), seed: 9)
            let first = procedure.nextTone()
            #expect(procedure.nextTone() == first)
        }
    }
}

@Suite struct SessionTests {
    @Test func stimuliAreNumberedAndAnswersChecked() throws {
        let session = TestSession(procedure: HughsonWestlake(plan: try plan([1000])), transducer: .supraAural, seed: 4)
        let first = try #require(session.next())
        #expect(first.id == 1 && session.next() == first)
        #expect(throws: AudiometryError.answerForAnother(answered: 2, waiting: 1)) { try session.respond(id: 2, answer: .notHeard) }
        try session.respond(id: 1, answer: .heard(.right))
        #expect(session.next()?.id == 2)
        #expect(throws: AudiometryError.answerForAnother(answered: 1, waiting: 2)) { try session.respond(id: 1, answer: .notHeard) }
    }

    @Test func catchTrialsSeparateNoisyFromReliableListeners() throws {
        let frequencies = [500.0, 1000, 2000, 4000]
        let testPlan = try plan(frequencies)
        var flaggedReliable = 0, flaggedNoisy = 0
        for seed in 0..<8 {
            var reliable = SimulatedListener(name: "reliable", thresholds: [.left: [1000: 20], .right: [1000: 20]], falseAlarmRate: 0.02, seed: UInt64(seed))
            var noisy = SimulatedListener(name: "noisy", thresholds: [.left: [1000: 20], .right: [1000: 20]], falseAlarmRate: 0.35, seed: UInt64(100 + seed))
            let good = try simulateTest(procedure: .bayesian, listener: &reliable, plan: testPlan, transducer: .supraAural, seed: UInt64(seed))
            let bad = try simulateTest(procedure: .bayesian, listener: &noisy, plan: testPlan, transducer: .supraAural, seed: UInt64(seed))
            if !good.reliability.isReliable { flaggedReliable += 1 }
            if !bad.reliability.isReliable { flaggedNoisy += 1 }
            #expect(bad.reliability.catchTrials > 0 && good.reliability.catchTrials > 0)
            if let flag = bad.reliability.flags.first { #expect(flag.contains("silent trials")) }
        }
        #expect(flaggedNoisy == 8 && flaggedReliable <= 1)
    }

    @Test func crossHearingIsNotedNotFlagged() throws {
        // The left ear is 60 dB worse than the right: beyond the 40 dB a supra-aural earphone's
        // sound loses crossing the head, so the left ear is heard through the right one.
        var listener = SimulatedListener(name: "one-sided", thresholds: [.left: [1000: 70], .right: [1000: 10]], seed: 5)
        let result = try simulateTest(procedure: .hughsonWestlake, listener: &listener, plan: try plan([1000]), transducer: .supraAural, seed: 5)
        #expect(result.reliability.isReliable, "\(result.reliability.flags)")
        #expect(result.reliability.notes.contains { $0.contains("masked retest") })
        let left = try #require(result.thresholds.first { $0.ear == .left }?.thresholdDBHL)
        #expect(left >= 45 && left <= 55, "the unmasked threshold is the right ear's plus the attenuation: \(left)")
    }

    @Test func populationMeetsItsAccuracyAndEffortTargets() throws {
        let frequencies = [500.0, 1000, 2000, 4000]
        let testPlan = try plan(frequencies)
        var errors: [ProcedureKind: [Double]] = [:], tones: [ProcedureKind: Int] = [:]
        for kind in [ProcedureKind.hughsonWestlake, .bayesian] {
            for (p, profile) in ListenerProfile.allCases.enumerated() where profile != .noisyResponder {
                for n in 0..<3 {
                    let seed = UInt64(p * 100 + n)
                    var listener = profile.make(seed: seed, frequencies: frequencies, interauralAttenuationDB: 40)
                    let result = try simulateTest(procedure: kind, listener: &listener, plan: testPlan, transducer: .supraAural, seed: seed)
                    tones[kind, default: 0] += result.presentations
                    for t in result.thresholds {
                        errors[kind, default: []].append(abs((t.thresholdDBHL ?? 200) - listener.threshold(t.ear, t.frequencyHz)))
                    }
                }
            }
        }
        for kind in [ProcedureKind.hughsonWestlake, .bayesian] {
            let e = errors[kind]!
            #expect(e.reduce(0, +) / Double(e.count) <= 4.5, "\(kind.rawValue) mean absolute error")
            #expect(Double(e.filter { $0 <= 10 }.count) / Double(e.count) >= 0.9)
        }
        #expect(Double(tones[.bayesian]!) <= 0.65 * Double(tones[.hughsonWestlake]!))
    }
}

@Suite struct SummaryTests {
    func thresholds(_ right: [Double: Double], _ left: [Double: Double]) -> [ThresholdResult] {
        right.map { ThresholdResult(ear: .right, frequencyHz: $0.key, thresholdDBHL: $0.value, noResponseAtDBHL: nil, presentations: 5) }
            + left.map { ThresholdResult(ear: .left, frequencyHz: $0.key, thresholdDBHL: $0.value, noResponseAtDBHL: nil, presentations: 5) }
    }

    @Test func pureToneAverageAndWHOGrades() {
        let summary = AudiogramSummary(thresholds: thresholds([500: 10, 1000: 15, 2000: 20, 4000: 35], [500: 40, 1000: 45, 2000: 50, 4000: 65]))
        let right = summary.ears.first { $0.ear == .right }!, left = summary.ears.first { $0.ear == .left }!
        #expect(right.pureToneAverageDBHL == 20 && right.whoGrade == "mild")
        #expect(left.pureToneAverageDBHL == 50 && left.whoGrade == "moderately severe")
        #expect(AudiogramSummary.whoGrade(19.9) == "normal" && AudiogramSummary.whoGrade(95) == "complete or total")
    }

    @Test func nalRGains() {
        // Byrne & Dillon's example shape: X = 0.05 × (30 + 40 + 50) = 6.
        let gains = AudiogramSummary.nalR([250: 25, 500: 30, 1000: 40, 2000: 50, 4000: 60])
        let expected1k: Double = 6 + 0.31 * 40 + 1  // 19.4
        let expected2k: Double = 6 + 0.31 * 50 - 1  // 20.5
        #expect(abs(gains[1000]! - expected1k) < 0.051)
        #expect(abs(gains[2000]! - expected2k) < 0.051)
        #expect(gains[250] == 0, "negative gains are 0: 6 + 7.75 − 17 < 0")
        #expect(AudiogramSummary.nalR([1000: 40]).isEmpty, "needs 500, 1000 and 2000 Hz")
    }

    @Test func chartUsesTheStandardSymbols() {
        var results = thresholds([1000: 20, 2000: 30], [1000: 40])
        results.append(ThresholdResult(ear: .left, frequencyHz: 4000, thresholdDBHL: nil, noResponseAtDBHL: 100, presentations: 9))
        let svg = AudiogramChart.svg(thresholds: results, title: "A <test>")
        #expect(svg.hasPrefix("<svg") && svg.contains("</svg>"))
        #expect(svg.contains("stroke=\"#d62728\"") && svg.contains("stroke=\"#1f4fd6\""), "red right, blue left")
        #expect(svg.contains("<circle") && svg.contains("A &lt;test&gt;"))
    }
}

@Suite struct StoreTests {
    @Test func savesAndReadsBack() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("results-\(UUID())/db.sqlite").path
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        let store = try ResultStore(path: path)
        var listener = ListenerProfile.slopingHighFrequency.make(seed: 2, frequencies: [1000, 2000], interauralAttenuationDB: 40)
        let result = try simulateTest(procedure: .bayesian, listener: &listener, plan: try plan([1000, 2000]), transducer: .insert, seed: 2)
        let first = try store.save(result, person: "Ada", calibration: "nominal")
        let second = try store.save(result, person: "Ada", calibration: "nominal", takenAt: Date(timeIntervalSinceNow: 60))
        #expect(second > first)
        let all = try ResultStore(path: path).all()
        #expect(all.map(\.id) == [second, first])
        let stored = try store.test(id: first)
        #expect(stored.person == "Ada" && stored.result == result)
        #expect(throws: AudiometryError.noStoredTest(id: 999)) { try store.test(id: 999) }
        #expect(throws: AudiometryError.noPersonName) { try store.save(result, person: "  ", calibration: "x") }
    }

    @Test func refusesAFileThatIsNotADatabase() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("not-db-\(UUID()).sqlite").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Data(repeating: 7, count: 4096).write(to: URL(fileURLWithPath: path))
        #expect(throws: AudiometryError.self) { try ResultStore(path: path) }
    }
}

/// What the hearing-test page shows while a test runs: which ear and tone, and about how long is left.
@Suite struct ProgressTests {
    @Test func progressGoesEarByEarToneByToneAndTheTimeLeftRunsDown() throws {
        let frequencies = [1000.0, 2000, 4000]
        let testPlan = try plan(frequencies)
        var tracker = ProgressTracker(procedure: .hughsonWestlake, plan: testPlan)
        #expect(tracker.expectedTurns >= 2 * frequencies.count * 3, "at least a few turns a tone: \(tracker.expectedTurns)")
        var listener = SimulatedListener(name: "mild", thresholds: [.left: [1000: 30, 2000: 35, 4000: 50], .right: [1000: 20, 2000: 25, 4000: 40]], seed: 3)
        let session = TestSession(procedure: ProcedureKind.hughsonWestlake.make(plan: testPlan, seed: 3), transducer: .supraAural, seed: 3)
        var seen: [TestProgress] = []
        while let stimulus = session.next() {
            seen.append(tracker.advance(to: stimulus))
            try session.respond(id: stimulus.id, answer: listener.answer(stimulus))
        }
        let first = try #require(seen.first), last = try #require(seen.last)
        #expect(first.earNumber == 1 && first.toneNumber == 1 && first.ears == 2 && first.tones == 3 && first.turn == 1)
        #expect(last.earNumber == 2 && last.toneNumber == 3 && last.turn == seen.count)
        // Ear 1's tones, then ear 2's; the count never goes back within an ear.
        #expect(zip(seen, seen.dropFirst()).allSatisfy { a, b in b.earNumber > a.earNumber || (b.earNumber == a.earNumber && b.toneNumber >= a.toneNumber) })
        #expect(first.secondsLeft > 60 && last.secondsLeft <= 30 && last.secondsLeft < first.secondsLeft / 4,
                "\(first.secondsLeft) s at the start, \(last.secondsLeft) s at the end")
    }
}
