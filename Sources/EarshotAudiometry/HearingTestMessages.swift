import Foundation

/// The messages between a running test and whoever answers it, as JSON: the line protocol of
/// `earshot hearing-test run --protocol jsonl` and the hub's hearing-test page speak the same.

/// A trial to present: `ear` is "left", "right", or "none" for a silent catch trial (its
/// frequency and level are those of the tone it stands in for).
public struct StimulusMessage: Codable, Equatable, Sendable {
    public var type = "stimulus"
    public var id: Int
    public var ear: String
    public var frequencyHz: Double
    public var levelDBHL: Double

    public init(_ stimulus: Stimulus) {
        id = stimulus.id
        ear = stimulus.isCatchTrial ? "none" : stimulus.tone.ear.rawValue
        frequencyHz = stimulus.tone.frequencyHz
        levelDBHL = stimulus.tone.levelDBHL
    }
}

/// The listener's answer: `{"id":17,"response":"left"}` ("left", "right" or "none"), with an
/// optional reaction time. The line protocol names the trial; the page answers the one it shows.
public struct AnswerMessage: Decodable, Equatable, Sendable {
    public var id: Int?
    public var response: String
    public var responseSeconds: Double?

    public static let responses = ["left", "right", "none"]

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decodeIfPresent(Int.self, forKey: .id)
        response = try c.decode(String.self, forKey: .response)
        // A reaction time that is not a number is no reaction time; the answer still counts.
        responseSeconds = (try? c.decodeIfPresent(Double.self, forKey: .responseSeconds)) ?? nil
    }

    private enum CodingKeys: String, CodingKey { case id, response, responseSeconds }

    /// The answer given, or nil for a response other than the three.
    public var answer: Answer? {
        switch response {
        case "left": .heard(.left)
        case "right": .heard(.right)
        case "none": .notHeard
        default: nil
        }
    }

    /// The reaction time where it is one: finite and not negative.
    public var seconds: Double? { responseSeconds.flatMap { $0.isFinite && $0 >= 0 ? $0 : nil } }
}

/// The finished test: the result as it is stored, with `"type":"result"`.
public struct ResultMessage: Encodable, Sendable {
    public var result: TestResult

    public init(_ result: TestResult) { self.result = result }

    public func encode(to encoder: Encoder) throws {
        try result.encode(to: encoder)
        var c = encoder.container(keyedBy: TypeKey.self)
        try c.encode("result", forKey: .type)
    }

    private enum TypeKey: String, CodingKey { case type }
}
