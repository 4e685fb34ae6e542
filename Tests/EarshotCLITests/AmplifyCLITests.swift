import EarshotCore
import EarshotIO
import EarshotTestSupport
import Foundation
import Testing

@Suite struct AmplifyCommands {
    static let sloping = #"{"left":{"250":30,"500":35,"1000":60,"2000":75,"4000":80,"6000":85},"right":{"250":0,"500":0,"1000":0,"2000":0,"4000":0}}"#

    /// Two seconds of noise with a 2 kHz tone in it, at `rate`, in `channels` channels.
    func speechLikeFile(_ path: String, rate: Double, channels: Int = 1, amplitude: Double = 0.05) throws {
        var random = SeededRandom(seed: 12)
        let audio = (0..<channels).map { _ in
            (0..<Int(2 * rate)).map { n in Float(amplitude * (sin(2 * Double.pi * 2000 * Double(n) / rate) + 0.5 * random.nextGaussian())) }
        }
        try AudioFile.write(AudioBuffer(channels: audio), to: path, sampleRate: rate, sampleFormat: .f32)
    }

    func levelDB(_ x: some Collection<Float>) -> Double {
        10 * log10(x.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(x.count))
    }

    @Test func amplifyGivesEachEarItsFittingAndKeepsTheCeiling() throws {
        try withTemporaryDirectory { dir in
            try Data(Self.sloping.utf8).write(to: dir.appendingPathComponent("a.json"))
            try speechLikeFile(dir.appendingPathComponent("in.wav").path, rate: 44_100, amplitude: 0.03)
            let result = try earshot("amplify", "in.wav", "-o", "out.wav", "--audiogram", "a.json", "--max-output-dbspl", "90", "--verbose", in: dir)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stderr.contains("output guard at -10.0 dBFS"), "\(result.stderr)")
            let (info, buffer) = try AudioFile.read(path: dir.appendingPathComponent("out.wav").path)
            #expect(info.sampleRate == 44_100 && info.channelCount == 2 && abs(info.frameCount - 88_200) <= 2)
            let left = Array(buffer.channel(0)), right = Array(buffer.channel(1))
            #expect(levelDB(left[20_000...]) > levelDB(right[20_000...]) + 10, "the sloping loss is amplified, the normal ear is not")
            let ceiling = Float(pow(10, -10.0 / 20))
            #expect((left + right).allSatisfy { abs($0) <= ceiling }, "no sample above 90 dB SPL")
        }
    }

    /// A maximum output above what the playback can play is said once, and the output is
    /// limited under full scale instead of cut at it.
    @Test func anUnreachableMaximumIsSaidAndLimited() throws {
        try withTemporaryDirectory { dir in
            try Data(Self.sloping.utf8).write(to: dir.appendingPathComponent("a.json"))
            try speechLikeFile(dir.appendingPathComponent("in.wav").path, rate: 16_000, amplitude: 0.4)
            let result = try earshot("amplify", "in.wav", "-o", "out.wav", "--audiogram", "a.json", "--max-output-dbspl", "110", in: dir)
            #expect(result.status == 0, "\(result.stderr)")
            let note = "note: the maximum output, 110 dB SPL, is 10.0 dB above what an uncalibrated playback"
            #expect(result.stderr.components(separatedBy: note).count == 2, "said once: \(result.stderr)")
            let (_, buffer) = try AudioFile.read(path: dir.appendingPathComponent("out.wav").path)
            let left = Array(buffer.channel(0))
            #expect(left.map(abs).max()! < 0.995, "held under full scale by the limiter, the guard left nothing to pin")
        }
    }

    @Test func fitPrintsTableJSONAndChart() throws {
        try withTemporaryDirectory { dir in
            try Data(Self.sloping.utf8).write(to: dir.appendingPathComponent("a.json"))
            let table = try earshot("fit", "--audiogram", "a.json", "--prescription", "nal_r", in: dir)
            #expect(table.status == 0 && table.stdout.hasPrefix("Hearing-aid fitting: NAL-R (linear)") && table.stdout.contains("65 dB")
                    && table.stdout.contains("max out"), "\(table.stdout)\(table.stderr)")
            let json = try earshot("fit", "--audiogram", "a.json", "--format", "json", "--png", "fit.png", in: dir)
            #expect(json.status == 0, "\(json.stderr)")
            let object = try #require(try JSONSerialization.jsonObject(with: json.stdoutData) as? [String: Any])
            #expect(object["rule"] as? String == "wdrc" && object["maximumOutputDBSPL"] as? Double == 100)
            let left = try #require(object["left"] as? [[String: Any]])
            #expect(left.count == 10)
            for key in ["centreHz", "thresholdDBHL", "gain50DB", "gain65DB", "gain80DB", "kneeDBSPL", "ratioSoftToMedium", "ratioAboveMedium", "maximumOutputDBSPL"] {
                #expect(left[0][key] is Double, "\(key)")
            }
            let png = try Data(contentsOf: dir.appendingPathComponent("fit.png"))
            #expect(png.starts(with: [0x89, 0x50, 0x4E, 0x47]))
        }
    }

    @Test func listenAmplifiesAfterNoiseReduction() throws {
        try withTemporaryDirectory { dir in
            try Data(Self.sloping.utf8).write(to: dir.appendingPathComponent("a.json"))
            try speechLikeFile(dir.appendingPathComponent("in.wav").path, rate: 16_000)
            let result = try earshot("listen", "in.wav", "-o", "out.wav", "--audiogram", "a.json", "--verbose", in: dir)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stderr.contains("→ amplification with a look-ahead limiter → output guard"), "\(result.stderr)")
            #expect(result.stderr.contains("algorithmic delay 7.88 ms"), "no delay added to the suppressor's: \(result.stderr)")
            let (info, buffer) = try AudioFile.read(path: dir.appendingPathComponent("out.wav").path)
            #expect(info.channelCount == 2 && info.frameCount == 32_000)
            #expect(levelDB(Array(buffer.channel(0))[8000...]) > levelDB(Array(buffer.channel(1))[8000...]) + 10)
        }
    }

    @Test func badInputIsRefusedAndLeavesNoOutput() throws {
        try withTemporaryDirectory { dir in
            try Data(Self.sloping.utf8).write(to: dir.appendingPathComponent("a.json"))
            try Data(#"{"left":{"500":20}}"#.utf8).write(to: dir.appendingPathComponent("bad.json"))
            try speechLikeFile(dir.appendingPathComponent("in.wav").path, rate: 16_000)
            try speechLikeFile(dir.appendingPathComponent("three.wav").path, rate: 16_000, channels: 3)
            let cases: [([String], String)] = [
                (["amplify", "in.wav", "-o", "out.wav"], "needs the listener's audiogram"),
                (["amplify", "in.wav", "-o", "out.wav", "--audiogram", "bad.json"], "bad.json: no \"right\" ear"),
                (["amplify", "in.wav", "-o", "out.wav", "--audiogram", "nothing.json"], "no such file, and not a stored test's id"),
                (["amplify", "three.wav", "-o", "out.wav", "--audiogram", "a.json"], "3 channels"),
                (["amplify", "in.wav", "-o", "out.wav", "--audiogram", "a.json", "--max-output-dbspl", "200"], "60–140 dB SPL"),
                (["amplify", "missing.wav", "-o", "out.wav", "--audiogram", "a.json"], "missing.wav"),
                (["fit", "--audiogram", "a.json", "--prescription", "nal-nl2"], "nal-nl2"),
            ]
            for (arguments, message) in cases {
                let result = try runProgram(earshotPath, arguments, directory: dir)
                #expect(result.status == 2, "\(arguments): \(result.stderr)")
                #expect(result.stderr.contains(message) && result.stderr.split(separator: "\n").count <= 2, "\(arguments): \(result.stderr)")
                #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("out.wav").path), "\(arguments) left an output")
            }
        }
    }
}
