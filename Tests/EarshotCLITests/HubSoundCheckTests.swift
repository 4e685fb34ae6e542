import EarshotCore
import EarshotIO
import EarshotTestSupport
import Foundation
import Testing

/// The dashboard's sound check over HTTP: a take posted as float samples comes back checked, as
/// `earshot soundcheck` would check it; a bad take gets one line saying why. (The page itself,
/// recording through a real browser's microphone, runs in Tests/Live/dashboard.py.)
@Suite(.serialized) struct HubSoundCheckTests {
    static let rate = 16_000.0

    /// 2 s of room tone, then 8 s of voiced syllables near -20 dBFS, with 50 Hz mains hum 20 dB
    /// under the speech throughout.
    static func take(seed: UInt64 = 3) -> [Float] {
        var random = SeededRandom(seed: seed)
        let quiet = Int(2 * rate), total = Int(10 * rate)
        var x = noise(count: total, seed: seed, amplitude: 0.002)
        var n = quiet
        while n < total - Int(rate / 4) {
            let length = Int((0.12 + 0.18 * Double.random(in: 0..<1, using: &random)) * rate)
            let f0 = 110 + 90 * Double.random(in: 0..<1, using: &random)
            for i in 0..<length {
                let t = Double(i) / rate
                var voice = 0.0
                for h in 1..<30 where f0 * Double(h) < rate / 2 { voice += sin(2 * .pi * f0 * Double(h) * t) * min(1, pow(500 / (f0 * Double(h)), 1.5)) }
                x[n + i] += Float(0.08 * sin(.pi * Double(i) / Double(length)) * voice)
            }
            n += length + Int((0.05 + 0.15 * Double.random(in: 0..<1, using: &random)) * rate)
        }
        for i in x.indices { x[i] += Float(0.012 * sin(2 * .pi * 50 * Double(i) / rate)) }
        return x
    }

    static func bytes(_ samples: [Float]) -> [UInt8] {
        samples.flatMap { withUnsafeBytes(of: $0.bitPattern.littleEndian, Array.init) }
    }

    @Test func aTakeComesBackChecked() async throws {
        try await withTemporaryDirectoryAsync { dir in
            let hub = try RunningHub(directory: dir)
            let page = try await hub.request(.GET, "/soundcheck")
            #expect(page.status == 200 && page.body.contains("echoCancellation: false"))
            let reply = try await hub.request(.POST, "/api/soundcheck?rate=16000&roomTone=2", token: hub.token, bytes: Self.bytes(Self.take()))
            #expect(reply.status == 200, "\(reply.body.prefix(300))")
            let json = try JSONSerialization.jsonObject(with: Data(reply.body.utf8)) as! [String: Any]
            let report = json["report"] as! [String: Any], metrics = report["metrics"] as! [String: Any]
            let kinds = (report["problems"] as! [[String: Any]]).map { $0["kind"] as! String }
            #expect(Set(metrics.keys) == ["speechLevelDBFS", "peakDBFS", "noiseFloorDBFS", "snrDB", "clippedShare", "roundedPeakShare", "humHz", "bandwidthHz", "rt60Seconds", "dcOffset"])
            #expect(metrics["humHz"] as? Double == 50 && kinds.contains("hum"), "\(metrics) \(kinds)")
            #expect(report["verdict"] as? String == "fix")
            #expect((json["chartSVG"] as? String)?.hasPrefix("<svg") == true)
        }
    }

    /// A recording opened on the page and the same file given to `earshot soundcheck` get one
    /// verdict and the same numbers: the page sends the file, the hub reads it as the command line does.
    /// The noise sits near the 15 dB SNR threshold, where two readings of one file used to disagree.
    @Test func thePageAndTheCommandLineAgreeOnAFile() async throws {
        try await withTemporaryDirectoryAsync { dir in
            var left = Self.take(seed: 5), right = Self.take(seed: 5)
            let hiss = noise(count: left.count, seed: 9, amplitude: 0.006)
            for i in left.indices { left[i] += hiss[i]; right[i] = 0.9 * right[i] + hiss[i] }
            let path = dir.appendingPathComponent("my mic <1>.wav").path
            try AudioFile.write(AudioBuffer(channels: [left, right]), to: path, sampleRate: Self.rate, sampleFormat: .s16)
            let cli = try earshot("soundcheck", path, "--format", "json")
            #expect(cli.status == 0, "\(cli.stderr)")
            let hub = try RunningHub(directory: dir.appendingPathComponent("hub"))
            let reply = try await hub.request(.POST, "/api/soundcheck/file?name=my%20mic%20%3C1%3E.wav", token: hub.token,
                                              bytes: Array(try Data(contentsOf: URL(fileURLWithPath: path))))
            #expect(reply.status == 200, "\(reply.body.prefix(300))")
            let page = try JSONSerialization.jsonObject(with: Data(reply.body.utf8)) as! [String: Any]
            let fromPage = try JSONSerialization.data(withJSONObject: page["report"]!, options: .sortedKeys)
            let fromCLI = try JSONSerialization.data(withJSONObject: try JSONSerialization.jsonObject(with: cli.stdoutData), options: .sortedKeys)
            #expect(fromPage == fromCLI, "page \(String(decoding: fromPage, as: UTF8.self))\ncli \(String(decoding: fromCLI, as: UTF8.self))")
            // The chart is named after the file, its frequency axis ends at the file's 8 kHz.
            let chart = page["chartSVG"] as? String ?? ""
            #expect(chart.contains("Sound check: my mic &lt;1&gt;.wav") && chart.contains(">8 kHz<") && !chart.contains(">10 kHz<"))

            let refused: [([UInt8], String)] = [([], "empty"), (Array("not audio at all".utf8), "not a readable audio file")]
            for (body, reason) in refused {
                let answer = try await hub.request(.POST, "/api/soundcheck/file?name=x.wav", token: hub.token, bytes: body)
                #expect(answer.status == 400 && answer.body.contains(reason) && !answer.body.contains("earshot-soundcheck-"), "\(answer.body)")
            }
        }
    }

    @Test func aBadTakeIsRefusedInOneLine() async throws {
        try await withTemporaryDirectoryAsync { dir in
            let hub = try RunningHub(directory: dir)
            let good = Self.bytes(Self.take())
            var poisoned = Self.take()
            poisoned[40_000] = .nan
            let cases: [(String, [UInt8], Int, String)] = [
                ("/api/soundcheck", good, 400, "'rate'"),
                ("/api/soundcheck?rate=1000000", good, 400, "'rate'"),
                ("/api/soundcheck?rate=16000&roomTone=9", good, 400, "'roomTone'"),
                ("/api/soundcheck?rate=16000", Array(good.dropLast()), 400, "multiple of 4"),
                ("/api/soundcheck?rate=16000", Array(good.prefix(4 * 8000)), 400, "at least 1 s"),
                ("/api/soundcheck?rate=16000", Self.bytes(poisoned), 400, "not a number"),
                ("/api/soundcheck?rate=8000", good + good + good + good, 413, "at most 60 s"),
            ]
            for (path, body, status, message) in cases {
                let reply = try await hub.request(.POST, path, token: hub.token, bytes: body)
                #expect(reply.status == status && reply.body.contains(message) && !reply.body.contains("\n"), "\(path) → \(reply.status) \(reply.body)")
            }
            #expect(try await hub.request(.POST, "/api/soundcheck?rate=16000", bytes: good).status == 401)
        }
    }
}
