import EarshotAudiometry
import EarshotCore
import Foundation

/// The hearing test for a person at the hub machine, driven by the dashboard's hearing-test
/// page: one test at a time, each tone played by the hub after a random pause (so the press
/// cannot be timed), the person's answer recorded, and the audiogram stored at the end.
actor HearingTestDesk {
    private let player: (any TonePlayer)?
    private let resultsPath: String
    private let pauseSeconds: ClosedRange<Double>
    private var running: Running?
    private var presenting = false

    private struct Running {
        var person: String
        var session: TestSession
        var stimulus: Stimulus
        var progress: ProgressTracker
    }

    /// Why the test cannot be given: no player.
    private let unavailable: String

    init(player: (any TonePlayer)?, resultsPath: String, unavailable: String? = nil, pauseSeconds: ClosedRange<Double> = 1.0...2.5) {
        self.player = player
        self.resultsPath = resultsPath
        self.unavailable = unavailable ?? "this hub plays no tones: start it with --calibration FILE (and --output-device)"
        self.pauseSeconds = pauseSeconds
    }

    /// `GET /api/hearing-test[?procedure=P&frequencies=F,F…]`: with a procedure and frequencies,
    /// also about how long that test takes.
    func status(procedure: String? = nil, frequencies: String? = nil) -> HearingTestStatus {
        guard let player else { return HearingTestStatus(available: false, reason: unavailable) }
        let calibration = player.calibration
        var status = HearingTestStatus(available: true, calibration: calibration.profile.name, running: running != nil,
                                       transducer: calibration.transducer.rawValue)
        if let kind = procedure.flatMap(ProcedureKind.init(rawValue:)),
           let list = frequencies?.split(separator: ",").compactMap({ Double($0) }), (1...16).contains(list.count),
           let plan = try? TestPlan(frequencies: list, calibration: calibration) {
            status.expectedSeconds = Double(ProgressTracker(procedure: kind, plan: plan).expectedTurns) * ProgressTracker.secondsPerTurn
        }
        return status
    }

    /// `POST /api/hearing-test`: `{"person":…, "procedure":"quick"|"hughson_westlake", "frequencies":[…]}`.
    func start(_ body: Data) async throws(HearingTestError) -> HearingTestStep {
        guard let player else { throw .unavailable(unavailable) }
        guard running == nil, !presenting else { throw .busy("a hearing test is already running (DELETE /api/hearing-test ends it)") }
        guard let object = (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] else {
            throw .invalid("the body must be a JSON object with person (and procedure, frequencies)")
        }
        guard let person = (object["person"] as? String)?.trimmingCharacters(in: .whitespaces), (1...100).contains(person.count) else {
            throw .invalid("'person' must be a name of 1–100 characters")
        }
        guard !person.hasControlCharacters else { throw .invalid("'person' must not hold control characters (U+0000–U+001F, U+007F)") }
        let procedureName = object["procedure"] as? String ?? ProcedureKind.quick.rawValue
        guard let procedure = ProcedureKind(rawValue: procedureName) else {
            throw .invalid("'procedure' must be one of \(ProcedureKind.allCases.map(\.rawValue).joined(separator: ", ")), not '\(procedureName)'")
        }
        var frequencies = AudiometricFrequencies.standard
        if let value = object["frequencies"] {
            guard let list = value as? [NSNumber], !list.isEmpty, list.count <= 16 else { throw .invalid("'frequencies' must be a list of 1–16 frequencies in Hz") }
            frequencies = list.map(\.doubleValue)
        }
        let session: TestSession, plan: TestPlan
        do {
            plan = try TestPlan(frequencies: frequencies, calibration: player.calibration)
            let seed = UInt64(Date().timeIntervalSince1970 * 1000)
            session = TestSession(procedure: procedure.make(plan: plan, seed: seed), transducer: player.calibration.transducer, seed: seed)
        } catch {
            throw .invalid("\(error)")
        }
        guard let first = session.next() else { throw .invalid("the plan holds no tone to test") }
        running = Running(person: person, session: session, stimulus: first, progress: ProgressTracker(procedure: procedure, plan: plan))
        return try await present(first)
    }

    /// `POST /api/hearing-test/answer`: `{"response":"left"|"right"|"none", "responseSeconds":…}`.
    func answer(_ body: Data) async throws(HearingTestError) -> HearingTestStep {
        guard let test = running else { throw .invalid("no hearing test is running") }
        guard !presenting else { throw .busy("a tone is still playing") }
        guard let message = try? JSONDecoder().decode(AnswerMessage.self, from: body) else {
            throw .invalid(#"the body must be {"response":"left"|"right"|"none"}"#)
        }
        guard let answer = message.answer else {
            throw .invalid("'response' must be left, right or none, not '\(message.response)'")
        }
        do {
            try test.session.respond(id: test.stimulus.id, answer: answer, responseSeconds: message.seconds)
        } catch {
            throw .invalid("\(error)")
        }
        guard let next = test.session.next() else { return try finish(test) }
        running?.stimulus = next
        return try await present(next)
    }

    /// `DELETE /api/hearing-test`: ends a running test; nothing is stored.
    func cancel() -> HearingTestStep {
        running = nil
        if !presenting { player?.close() }
        return HearingTestStep(state: .cancelled)
    }

    /// Waits a random pause, plays the stimulus, and asks for the answer.
    private func present(_ stimulus: Stimulus) async throws(HearingTestError) -> HearingTestStep {
        guard let player else { throw .unavailable("no player") }
        presenting = true
        defer { presenting = false }
        let pause = Double.random(in: pauseSeconds)
        let tone = stimulus.isCatchTrial ? nil : stimulus.tone
        let progress = running?.progress.advance(to: stimulus)
        do {
            try await Task.sleep(for: .seconds(pause))
            // Playback blocks for the tone's length: on a thread of its own, not the server's.
            try await withCheckedThrowingContinuation { (done: CheckedContinuation<Void, Error>) in
                Thread.detachNewThread {
                    do { try player.present(tone); done.resume() } catch { done.resume(throwing: error) }
                }
            }
        } catch {
            running = nil
            player.close()
            throw .unavailable("the tone could not be played (\(error)); the test is ended")
        }
        guard running != nil else {  // stopped while the tone played
            player.close()
            throw .invalid("the test was stopped")
        }
        return HearingTestStep(state: .answer, trial: stimulus.id, progress: progress)
    }

    private func finish(_ test: Running) throws(HearingTestError) -> HearingTestStep {
        running = nil
        player?.close()
        let result = test.session.result
        let id: Int64
        do {
            id = try ResultStore(path: resultsPath).save(result, person: test.person, calibration: player?.calibration.profile.name ?? "")
        } catch {
            throw .unavailable("the result could not be stored: \(error)")
        }
        let svg = AudiogramChart.svg(thresholds: result.thresholds, title: "\(test.person), \(Self.today())")
        // The command finds the hub's results by itself when the hub keeps them in the default folder.
        let folder = (resultsPath as NSString).deletingLastPathComponent
        let show = "earshot audiogram show \(id)" + (resultsPath == ResultStore.path() ? "" : " --data \(shellWord(folder))")
        return HearingTestStep(state: .done, person: test.person, reliability: result.reliability, svg: svg, testId: id,
                               showCommand: show, thresholds: result.thresholds, summary: AudiogramSummary(thresholds: result.thresholds))
    }

    static func today() -> String {
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyy-MM-dd"
        return formatter.string(from: Date())
    }
}

/// `GET /api/hearing-test`: whether this hub can give a test, and with what.
struct HearingTestStatus: Encodable, Sendable {
    var available: Bool
    /// Why not, when it cannot.
    var reason: String?
    var calibration: String?
    var running: Bool?
    var transducer: String?
    /// About how long the test asked about takes, at a typical listener's pace.
    var expectedSeconds: Double?
}

/// Where a test stands after a request: waiting for the answer to a trial, cancelled, or done
/// with the audiogram (thresholds, reliability, the chart as SVG) and its id in the results.
struct HearingTestStep: Encodable, Sendable {
    enum State: String, Encodable, Sendable { case answer, cancelled, done }
    var state: State
    var trial: Int?
    var progress: TestProgress?
    var person: String?
    var reliability: Reliability?
    var svg: String?
    var testId: Int64?
    /// The command that shows this result again.
    var showCommand: String?
    var thresholds: [ThresholdResult]?
    var summary: AudiogramSummary?
}

/// Why the hearing-test desk refused a request; each maps to an HTTP status.
enum HearingTestError: Error {
    case invalid(String), busy(String), unavailable(String)
}
