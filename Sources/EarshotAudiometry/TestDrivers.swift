import EarshotCore
import Foundation

extension TestSession {
    /// The JSON line protocol: each stimulus out as a line, one answer in per line (blank lines
    /// skipped), the result last.
    public func runLineProtocol(readLine: () -> String?, write: (Data) -> Void) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var lineNumber = 0
        while let stimulus = next() {
            write(try encoder.encode(StimulusMessage(stimulus)) + Data("\n".utf8))
            var answer: AnswerMessage?
            while answer == nil {
                guard let line = readLine() else { throw AudiometryError.answersEnded(stimulus: stimulus.id) }
                lineNumber += 1
                guard !line.trimmingCharacters(in: .whitespaces).isEmpty else { continue }
                guard let parsed = try? JSONDecoder().decode(AnswerMessage.self, from: Data(line.utf8)), parsed.id != nil else {
                    throw AudiometryError.notAnAnswer(line: lineNumber, waiting: stimulus.id)
                }
                answer = parsed
            }
            guard let answer, let id = answer.id, let response = answer.answer else {
                throw AudiometryError.notAResponse(line: lineNumber, response: answer?.response ?? "")
            }
            try respond(id: id, answer: response, responseSeconds: answer.responseSeconds)
        }
        write(try encoder.encode(ResultMessage(result)) + Data("\n".utf8))
    }

    public static let answerWindowSeconds = 2.0

    /// With real tones: each stimulus is played after a random pause (1–3 s, so a press cannot be
    /// timed), then the listener has `answerWindowSeconds` to press L or R; Q stops. `key` waits
    /// up to its timeout for a press; presses before the tone do not count.
    public func runWithTones(_ player: TonePlayer, seed: UInt64, pauseSeconds: ClosedRange<Double> = 1...3,
                             key: (_ timeoutSeconds: Double) -> Character?) throws {
        var random = SeededRandom(seed: seed &+ 99)
        while let stimulus = next() {
            usleep(UInt32(Double.random(in: pauseSeconds, using: &random) * 1_000_000))
            while key(0) != nil {}
            try player.present(stimulus.isCatchTrial ? nil : stimulus.tone)
            let started = Date()
            let pressed = key(Self.answerWindowSeconds)
            let answer: Answer
            switch pressed {
            case "l", "L": answer = .heard(.left)
            case "r", "R": answer = .heard(.right)
            case "q", "Q": throw AudiometryError.stopped
            default: answer = .notHeard
            }
            try respond(id: stimulus.id, answer: answer, responseSeconds: pressed == nil ? nil : Date().timeIntervalSince(started))
        }
    }
}
