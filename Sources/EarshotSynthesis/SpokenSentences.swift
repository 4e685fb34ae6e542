import EarshotCore
import EarshotIO
import Foundation

extension SceneMaterial {
    /// A few sentences in varied espeak-ng voices, when espeak-ng is installed (it is run once per
    /// sentence); none without it.
    public static func espeakSentences(sampleRate rate: Double, random: inout SeededRandom) -> [[Float]] {
        guard let espeak = ["/usr/bin/espeak-ng", "/usr/local/bin/espeak-ng", "/opt/homebrew/bin/espeak-ng"]
            .first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else { return [] }
        let sentences = ["Could you pass me the salt, please?", "The meeting has moved to Thursday afternoon.",
                         "I think the bus is running late again.", "Turn left at the second set of lights.",
                         "She said the package arrived this morning.", "We should water the plants before we leave."]
        let voices = ["en-us", "en-gb", "en-us+f3", "en-gb+m3", "en-us+f2", "en+m5"]
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("earshot-speech-\(getpid())")
        try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        var clips: [[Float]] = []
        for (index, sentence) in sentences.enumerated() {
            let path = folder.appendingPathComponent("\(index).wav").path
            let process = Process()
            process.executableURL = URL(fileURLWithPath: espeak)
            process.arguments = ["-v", voices.randomElement(using: &random)!, "-s", String(Int.random(in: 130...190, using: &random)), "-w", path, sentence]
            process.standardError = FileHandle.nullDevice
            guard (try? process.run()) != nil else { continue }
            process.waitUntilExit()
            if process.terminationStatus == 0, let (info, buffer) = try? AudioFile.read(path: path),
               let resampled = try? Resampler.resample([buffer.toArrays()[0]], from: info.sampleRate, to: rate) {
                clips.append(resampled[0])
            }
        }
        return clips
    }
}
