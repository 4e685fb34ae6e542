import EarshotAudiometry
import Foundation
import Testing

/// The messages the line protocol and the hub's page share.
@Suite struct HearingTestMessagesTests {
    func json(_ value: some Encodable) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: try JSONEncoder().encode(value)) as? [String: Any])
    }

    @Test func aStimulusSaysItsEarOrNoneForACatchTrial() throws {
        let tone = Tone(ear: .right, frequencyHz: 2000, levelDBHL: 35)
        let shown = try json(StimulusMessage(Stimulus(id: 7, tone: tone, isCatchTrial: false)))
        #expect(shown["type"] as? String == "stimulus" && shown["id"] as? Int == 7 && shown["ear"] as? String == "right")
        #expect(shown["frequencyHz"] as? Double == 2000 && shown["levelDBHL"] as? Double == 35)
        let silent = try json(StimulusMessage(Stimulus(id: 8, tone: tone, isCatchTrial: true)))
        #expect(silent["ear"] as? String == "none" && silent["frequencyHz"] as? Double == 2000)
    }

    @Test func answersAreReadAsTheListenerGaveThem() throws {
        func read(_ text: String) throws -> AnswerMessage { try JSONDecoder().decode(AnswerMessage.self, from: Data(text.utf8)) }
        #expect(try read(#"{"id":3,"response":"left","responseSeconds":0.8}"#).answer == .heard(.left))
        #expect(try read(#"{"id":3,"response":"left","responseSeconds":0.8}"#).seconds == 0.8)
        #expect(try read(#"{"response":"none"}"#).answer == .notHeard)
        #expect(try read(#"{"response":"none"}"#).id == nil)
        #expect(try read(#"{"response":"maybe"}"#).answer == nil)
        // A reaction time that is not one is left out; the answer stands.
        #expect(try read(#"{"response":"right","responseSeconds":"soon"}"#).answer == .heard(.right))
        #expect(try read(#"{"response":"right","responseSeconds":-1}"#).seconds == nil)
        #expect(throws: (any Error).self) { try read(#"{"id":3}"#) }
        #expect(throws: (any Error).self) { try read(#"{"response":5}"#) }
    }

    @Test func theResultIsTheStoredOneWithItsType() throws {
        let session = TestSession(procedure: HughsonWestlake(plan: try plan([1000])), transducer: .insert, seed: 4)
        while let stimulus = session.next() {
            try session.respond(id: stimulus.id, answer: stimulus.isCatchTrial || stimulus.tone.levelDBHL < 30 ? .notHeard : .heard(stimulus.tone.ear))
        }
        let shown = try json(ResultMessage(session.result))
        #expect(Set(shown.keys) == ["type", "procedure", "transducer", "thresholds", "presentations", "reliability"])
        #expect(shown["type"] as? String == "result" && shown["transducer"] as? String == "insert")
        #expect(shown["presentations"] as? Int == session.result.presentations)
    }
}
