import EarshotAudiometry
import EarshotCore
import Foundation
import Testing

/// The two drivers of a session, in process: the JSON line protocol (what `hearing-test run
/// --protocol jsonl` and any front end speak) and the tones with key presses.
struct TestDriverTests {
    func session(seed: UInt64 = 4) throws -> TestSession {
        TestSession(procedure: ProcedureKind.quick.make(plan: try plan([1000, 4000]), seed: seed), transducer: .supraAural, seed: seed)
    }

    @Test func lineProtocolRunsToItsResult() throws {
        let session = try session()
        let truth: [Double: Double] = [1000: 25, 4000: 45]
        var written: [[String: Any]] = [], answers: [String] = []
        try session.runLineProtocol(readLine: { answers.isEmpty ? nil : answers.removeFirst() }, write: { data in
            let line = try! JSONSerialization.jsonObject(with: data) as! [String: Any]
            written.append(line)
            guard line["type"] as? String == "stimulus", let id = line["id"] as? Int, let ear = line["ear"] as? String else { return }
            // A listener with sharp thresholds, the same in both ears.
            let heard = ear != "none" && (line["levelDBHL"] as! Double) >= truth[line["frequencyHz"] as! Double]!
            answers += ["", #"{"id":\#(id),"response":"\#(heard ? ear : "none")"}"#]  // a blank line is skipped
        })
        #expect(written.last?["type"] as? String == "result")
        #expect(session.result.thresholds.count == 4)
        for t in session.result.thresholds {
            #expect(abs((t.thresholdDBHL ?? -99) - truth[t.frequencyHz]!) <= 5, "\(t)")
        }
    }

    @Test func lineProtocolRefusesWhatIsNotAnAnswer() throws {
        #expect(throws: AudiometryError.answersEnded(stimulus: 1)) { try self.session().runLineProtocol(readLine: { nil }, write: { _ in }) }
        #expect(throws: AudiometryError.notAnAnswer(line: 1, waiting: 1)) {
            try self.session().runLineProtocol(readLine: { "left" }, write: { _ in })
        }
        #expect(throws: AudiometryError.notAResponse(line: 1, response: "both")) {
            try self.session().runLineProtocol(readLine: { #"{"id":1,"response":"both"}"# }, write: { _ in })
        }
    }

    /// Q stops the test; nothing was heard is a press that never came.
    @Test func tonesStopAtQ() throws {
        final class Silent: TonePlayer, @unchecked Sendable {
            let calibration = try! Calibration(profile: .nominal(transducer: .supraAural))
            var played = 0
            func present(_ tone: Tone?) throws { played += 1 }
            func close() {}
        }
        let player = Silent(), session = try session()
        var presses: [Character?] = [nil, nil, "q"]
        #expect(throws: AudiometryError.stopped) {
            try session.runWithTones(player, seed: 1, pauseSeconds: 0...0) { timeout in timeout == 0 ? nil : presses.removeFirst() }
        }
        #expect(player.played == 3)
    }
}
