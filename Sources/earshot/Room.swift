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

/// The sample format room outputs default to: 32-bit float wherever the container holds it
/// (responses and generations are not confined to ±1), else the container's best.
func roomSampleFormat(for path: String, requested: SampleFormat?) throws -> SampleFormat {
    if let requested { return requested }
    switch try AudioContainer(fileExtension: (path as NSString).pathExtension) {
    case .flac: return .s24
    case .ogg: return .vorbis
    case .wav, .aiff, .caf: return .f32
    }
}

/// Writes channels atomically, refusing to clip silently into an integer format.
func writeRoomAudio(_ channels: [[Float]], to path: String, sampleRate: Double, sampleFormat: SampleFormat) throws {
    let isFloat = [.f32, .f64].contains(sampleFormat)
    let peak = isFloat ? 0 : channels.reduce(Float(0)) { max($0, $1.reduce(0) { max($0, abs($1)) }) }
    if peak > 1 {
        throw EarshotError.invalidArgument(
            "\(path): the audio peaks at \(String(format: "%+.1f", 20 * log10(peak))) dBFS and \(sampleFormat.rawValue) would clip it; use a float format or normalise")
    }
    try AudioFile.write(AudioBuffer(channels: channels), to: path, sampleRate: sampleRate, sampleFormat: sampleFormat)
}

/// Makes a folder for outputs (and its parents), or says clearly why it cannot.
func makeOutputDirectory(_ path: String) throws {
    var isDirectory: ObjCBool = false
    if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) {
        guard isDirectory.boolValue else { throw EarshotError.invalidArgument("\(path) exists and is not a folder") }
        return
    }
    do {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    } catch {
        throw EarshotError.invalidArgument("\(path): cannot create the folder (\(error.localizedDescription))")
    }
}

/// Parses "5x4x3" and "1.5,2,1.2".
func parseTriple(_ text: String, separator: Character, name: String) throws -> (Double, Double, Double) {
    let parts = text.split(separator: separator).map { Double($0.trimmingCharacters(in: .whitespaces)) }
    guard parts.count == 3, let a = parts[0], let b = parts[1], let c = parts[2], [a, b, c].allSatisfy(\.isFinite) else {
        throw EarshotError.invalidArgument("\(name) must be three numbers like \(separator == "x" ? "5x4x3" : "1.5,2,1.2"), not '\(text)'")
    }
    return (a, b, c)
}
