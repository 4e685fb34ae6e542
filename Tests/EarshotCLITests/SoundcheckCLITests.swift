import EarshotCore
import EarshotIO
import EarshotTestSupport
import Foundation
import Testing

@Suite struct SoundcheckCommand {
    /// Two seconds of a tone complex in white noise, then DC added: a recording with a known fault.
    func recording(_ path: String, dc: Float = 0) throws {
        var random = SeededRandom(seed: 21)
        let rate = 16_000.0
        let audio = (0..<Int(3 * rate)).map { n -> Float in
            let t = Double(n) / rate
            let syllable = sin(Double.pi * (t * 4).truncatingRemainder(dividingBy: 1))
            let voice = syllable * (0.05 * sin(2 * Double.pi * 150 * t) + 0.03 * sin(2 * Double.pi * 450 * t) + 0.01 * sin(2 * Double.pi * 1350 * t))
            return Float(voice + 0.0005 * random.nextGaussian()) + dc
        }
        try AudioFile.write(AudioBuffer(channels: [audio]), to: path, sampleRate: rate, sampleFormat: .f32)
    }

    @Test func jsonKeepsTheContract() throws {
        try withTemporaryDirectory { dir in
            try recording(dir.appendingPathComponent("take.wav").path, dc: 0.05)
            let result = try earshot("soundcheck", "take.wav", "--format", "json", in: dir)
            #expect(result.status == 0, "\(result.stderr)")
            let json = try #require(try JSONSerialization.jsonObject(with: result.stdoutData) as? [String: Any])
            #expect(Set(json.keys) == ["verdict", "metrics", "problems"])
            #expect(json["verdict"] as? String == "fix")
            let metrics = try #require(json["metrics"] as? [String: Any])
            #expect(Set(metrics.keys) == ["speechLevelDBFS", "peakDBFS", "noiseFloorDBFS", "snrDB", "clippedShare", "roundedPeakShare",
                                          "humHz", "bandwidthHz", "rt60Seconds", "dcOffset"])
            #expect(abs((metrics["dcOffset"] as? Double ?? 0) - 0.05) < 0.001)
            let problems = try #require(json["problems"] as? [[String: Any]])
            #expect(problems.allSatisfy { Set($0.keys) == ["kind", "value", "threshold", "detail", "advice"] })
            let dc = try #require(problems.first { $0["kind"] as? String == "dc_offset" })
            #expect((dc["detail"] as? String ?? "").contains("0.050"), "the number")
            #expect((dc["detail"] as? String ?? "").contains("0.010"), "the threshold")
        }
    }

    @Test func pngIsDrawnAndTextIsReadable() throws {
        try withTemporaryDirectory { dir in
            try recording(dir.appendingPathComponent("take.wav").path)
            let result = try earshot("soundcheck", "take.wav", "--png", "check.png", in: dir)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout.contains("take.wav:"))
            let png = try Data(contentsOf: dir.appendingPathComponent("check.png"))
            #expect(png.prefix(8) == Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]))
        }
    }

    @Test func badInputGetsOneLineAndNoOutput() throws {
        try withTemporaryDirectory { dir in
            let missing = try earshot("soundcheck", "nothing.wav", "--png", "out.png", in: dir)
            #expect(missing.status == 2)
            #expect(missing.stderr.split(separator: "\n").count == 1, "\(missing.stderr)")
            #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("out.png").path))
            try AudioFile.write(AudioBuffer(channels: [[Float](repeating: 0.1, count: 4000)]), to: dir.appendingPathComponent("short.wav").path, sampleRate: 16_000)
            let short = try earshot("soundcheck", "short.wav", in: dir)
            #expect(short.status == 2 && short.stderr.contains("at least 1 s"), "\(short.stderr)")
            FileManager.default.createFile(atPath: dir.appendingPathComponent("junk.wav").path, contents: Data("not audio".utf8))
            let junk = try earshot("soundcheck", "junk.wav", in: dir)
            #expect(junk.status == 2, "\(junk.stderr)")
            for arguments in [["soundcheck", "x.wav", "--png", "x.jpg"], ["soundcheck", "x.wav", "--play"], ["soundcheck", "x.wav", "--all-inputs"],
                              ["soundcheck", "--seconds", "0"]] {
                let refused = try runProgram(earshotPath, arguments, directory: dir)
                #expect(refused.status == 2, "\(arguments): \(refused.stderr)")
            }
        }
    }
}
