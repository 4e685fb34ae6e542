import ArgumentParser
import EarshotCore
import EarshotIO
import Foundation

/// `earshot room …`: room acoustics for research and for art.
struct Room: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Room acoustics: iterate a room (\"I am sitting in a room\"), measure, analyse and simulate impulse responses.",
        subcommands: [RoomIterate.self, RoomSweep.self, RoomMeasure.self, RoomAnalyze.self, RoomSimulate.self])
}

/// Parses "5x4x3" and "1.5,2,1.2".
func parseTriple(_ text: String, separator: Character, name: String) throws -> (Double, Double, Double) {
    let parts = text.split(separator: separator).map { Double($0.trimmingCharacters(in: .whitespaces)) }
    guard parts.count == 3, let a = parts[0], let b = parts[1], let c = parts[2], [a, b, c].allSatisfy(\.isFinite) else {
        throw EarshotError.invalidArgument("\(name) must be three numbers like \(separator == "x" ? "5x4x3" : "1.5,2,1.2"), not '\(text)'")
    }
    return (a, b, c)
}
