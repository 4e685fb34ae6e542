import EarshotCore
import Foundation
import Testing

/// Named values are written in snake_case and read with hyphens too, in JSON and as arguments.
struct ValueSpellingTests {
    enum Mode: String, SnakeCaseValue, Codable {
        case raw
        case voiceIsolation = "voice_isolation"

        init?(rawValue: String) {
            guard let value = Self.named(rawValue) else { return nil }
            self = value
        }
    }

    @Test func writtenOneWayReadEither() throws {
        #expect(Mode(rawValue: "voice_isolation") == .voiceIsolation && Mode(rawValue: "voice-isolation") == .voiceIsolation)
        #expect(Mode(rawValue: "voice isolation") == nil && Mode(rawValue: "Voice_Isolation") == nil)
        #expect(String(decoding: try JSONEncoder().encode([Mode.voiceIsolation]), as: UTF8.self) == #"["voice_isolation"]"#)
        #expect(try JSONDecoder().decode([Mode].self, from: Data(#"["voice-isolation","raw"]"#.utf8)) == [.voiceIsolation, .raw])
    }
}
