import EarshotTestSupport
import Foundation
import Testing

/// Plays a listener through the line protocol: heard everything at or above `threshold` in the
/// ear it was played to, nothing else.
func driveProtocol(_ arguments: [String], threshold: Double, environment dir: URL) throws -> (status: Int32, lines: [[String: Any]], stderr: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: earshotPath)
    process.arguments = arguments
    process.currentDirectoryURL = dir
    let input = Pipe(), output = Pipe(), errors = Pipe()
    process.standardInput = input
    process.standardOutput = output
    process.standardError = errors
    try process.run()
    var lines: [[String: Any]] = []
    var buffer = Data()
    let reader = output.fileHandleForReading
    while true {
        let chunk = reader.availableData
        if chunk.isEmpty { break }
        buffer.append(chunk)
        while let newline = buffer.firstIndex(of: 10) {
            let line = buffer[buffer.startIndex..<newline]
            buffer = Data(buffer[(newline + 1)...])
            let message = try JSONSerialization.jsonObject(with: line) as! [String: Any]
            lines.append(message)
            if message["type"] as? String == "stimulus" {
                let ear = message["ear"] as! String, level = message["levelDBHL"] as! Double
                let response = ear != "none" && level >= threshold ? ear : "none"
                input.fileHandleForWriting.write(Data("{\"id\":\(message["id"]!),\"response\":\"\(response)\"}\n".utf8))
            }
        }
    }
    try? input.fileHandleForWriting.close()
    process.waitUntilExit()
    let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    return (process.terminationStatus, lines, stderr)
}

@Suite struct HearingTestCommands {
    @Test(arguments: ["hughson_westlake", "hughson-westlake", "quick", "bayesian"])
    func protocolRunsATestToItsResult(procedure: String) throws {
        try withTemporaryDirectory { dir in
            let run = try driveProtocol(
                ["hearing-test", "run", "--protocol", "jsonl", "--procedure", procedure, "--frequencies", "500,1000,4000", "--seed", "7"],
                threshold: 30, environment: dir)
            #expect(run.status == 0, "\(run.stderr)")
            let stimuli = run.lines.filter { $0["type"] as? String == "stimulus" }
            #expect(stimuli.count > 10)
            #expect(stimuli.map { $0["id"] as! Int } == Array(1...stimuli.count))
            #expect(stimuli.allSatisfy { ["left", "right", "none"].contains($0["ear"] as! String) })
            let result = try #require(run.lines.last)
            #expect(result["type"] as? String == "result")
            // One spelling out, snake_case; the former kebab-case one is still read.
            #expect(result["procedure"] as? String == procedure.replacingOccurrences(of: "-", with: "_"), "\(result["procedure"] ?? "none")")
            let thresholds = try #require(result["thresholds"] as? [[String: Any]])
            #expect(thresholds.count == 6)
            for t in thresholds {
                let level = try #require(t["thresholdDBHL"] as? Double)
                #expect(abs(level - 30) <= 5, "\(t)")
            }
            #expect(result["presentations"] as? Int == stimuli.filter { $0["ear"] as! String != "none" }.count)
            let reliability = try #require(result["reliability"] as? [String: Any])
            #expect((reliability["flags"] as? [String])?.isEmpty == true)
        }
    }

    @Test func resultIsStoredAndShownAsAnAudiogram() throws {
        try withTemporaryDirectory { dir in
            let data = dir.path, db = dir.appendingPathComponent("results.sqlite").path
            let run = try driveProtocol(
                ["hearing-test", "run", "--protocol", "jsonl", "--procedure", "bayesian", "--frequencies", "500,1000,2000,4000",
                 "--person", "Grace", "--data", data, "--seed", "3"], threshold: 35, environment: dir)
            #expect(run.status == 0 && run.stderr.contains("Saved as test 1"), "\(run.stderr)")
            let list = try earshot("audiogram", "list", "--data", data)
            #expect(list.status == 0 && list.stdout.contains("Grace") && list.stdout.contains("bayesian"))
            let show = try earshot("audiogram", "show", "1", "--data", data, "--svg", "chart.svg", "--png", "chart.png", in: dir)
            #expect(show.status == 0, "\(show.stderr)")
            // The prescription under the name `fit` prints for it.
            #expect(show.stdout.contains("WHO grade: moderate hearing loss") && show.stdout.contains("Earshot WDRC"), "\(show.stdout)")
            let svg = try String(contentsOf: dir.appendingPathComponent("chart.svg"), encoding: .utf8)
            #expect(svg.hasPrefix("<svg") && svg.contains("Grace"))
            let png = try Data(contentsOf: dir.appendingPathComponent("chart.png"))
            #expect(png.prefix(8) == Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]))
            let json = try earshot("audiogram", "show", "1", "--data", data, "--format", "json")
            #expect(json.status == 0 && json.stdout.contains("\"whoGrade\":\"moderate\""))

            // The stored result is fitted by its id.
            let fit = try earshot("fit", "--audiogram", "1", "--data", data, "--format", "json")
            #expect(fit.status == 0, "\(fit.stderr)")
            let fitting = try #require(try JSONSerialization.jsonObject(with: fit.stdoutData) as? [String: Any])
            let bands = try #require(fitting["right"] as? [[String: Any]])
            let at1k = try #require(bands.first { $0["centreHz"] as? Double == 1000 }?["thresholdDBHL"] as? Double)
            #expect(abs(at1k - 35) <= 10, "the measured threshold, about 35 dB HL: \(at1k)")
            let fitText = try earshot("fit", "--audiogram", "1", "--data", data)
            #expect(fitText.stdout.hasPrefix("Hearing-aid fitting: Earshot WDRC") && fitText.stdout.contains("input speech at 50 (soft)"), "\(fitText.stdout)")
            let missing = try earshot("fit", "--audiogram", "2", "--data", data)
            #expect(missing.status == 2 && missing.stderr.contains("no stored test has id 2 (run 'earshot audiogram list')"), "\(missing.stderr)")
            // `--db FILE`, the former spelling, is still read for one release, and no longer shown.
            let former = try earshot("audiogram", "list", "--db", db)
            #expect(former.status == 0 && former.stdout.contains("Grace"), "\(former.stderr)")
            let help = try earshot("audiogram", "list", "--help")
            #expect(help.stdout.contains("--data") && !help.stdout.contains("--db"), "\(help.stdout)")
        }
    }

    /// One data folder: a result kept with `--data DIR` is found by `audiogram --data DIR`, and the
    /// hint the test prints works as written.
    @Test func theDataFolderIsSharedAndTheHintWorks() throws {
        try withTemporaryDirectory { dir in
            let run = try driveProtocol(
                ["hearing-test", "run", "--protocol", "jsonl", "--procedure", "quick", "--frequencies", "1000",
                 "--person", "Ada", "--data", "home", "--seed", "3"], threshold: 20, environment: dir)
            #expect(run.status == 0 && run.stderr.contains("'earshot audiogram show 1 --data home'"), "\(run.stderr)")
            #expect(FileManager.default.fileExists(atPath: dir.appendingPathComponent("home/results.sqlite").path))
            let shown = try earshot("audiogram", "show", "1", "--data", "home", in: dir)
            #expect(shown.status == 0 && shown.stdout.contains("Ada"), "\(shown.stderr)")
        }
    }

    @Test func calibrationProfilesAreMadeAndUsed() throws {
        try withTemporaryDirectory { dir in
            let made = try earshot("calibration", "create", "--transducer", "insert", "--name", "lab", "--measured",
                                   "250=100,500=101,1000=102,2000=103,4000=104", "-o", "lab.json", in: dir)
            #expect(made.status == 0, "\(made.stderr)")
            let added = try earshot("calibration", "create", "--transducer", "insert", "--name", "lab", "--biological",
                                    "8000=-70", "--add", "-o", "lab.json", in: dir)
            #expect(added.status == 0, "\(added.stderr)")
            let text = try String(contentsOf: dir.appendingPathComponent("lab.json"), encoding: .utf8)
            #expect(text.contains("\"1000\" : 102") && text.contains("\"8000\" : 85.5"), "\(text)")
            let run = try driveProtocol(
                ["hearing-test", "run", "--protocol", "jsonl", "--transducer", "insert", "--calibration", "lab.json",
                 "--frequencies", "1000,8000", "--procedure", "bayesian", "--seed", "1"], threshold: 20, environment: dir)
            #expect(run.status == 0, "\(run.stderr)")
            // 8 kHz reaches only 85.5 − 15.5 = 70 dB HL on this set-up: no stimulus ever goes above.
            let at8k = run.lines.filter { $0["type"] as? String == "stimulus" && $0["frequencyHz"] as? Double == 8000 }
            #expect(!at8k.isEmpty && at8k.allSatisfy { ($0["levelDBHL"] as! Double) <= 70 })
        }
    }

    @Test(arguments: [
        (["hearing-test", "run", "--protocol", "jsonl"], "{\"id\": 1, \"response\": \"maybe\"}\n", "response must be"),
        (["hearing-test", "run", "--protocol", "jsonl"], "not json\n", "is not an answer"),
        (["hearing-test", "run", "--protocol", "jsonl"], "{\"id\": 5, \"response\": \"none\"}\n", "stimulus 1 is waiting"),
        (["hearing-test", "run", "--protocol", "jsonl"], "", "input ended"),
        (["hearing-test", "run", "--protocol", "jsonl", "--frequencies", "1000,1234"], "", "1234 Hz"),
        (["hearing-test", "run", "--protocol", "jsonl", "--cap-dbhl", "200"], "", "cap"),
        (["hearing-test", "run"], "", "calibration profile"),
        (["hearing-test", "run", "--protocol", "jsonl", "--calibration", "missing.json"], "", "no such file"),
        (["audiogram", "list", "--db", "none.sqlite"], "", "no results yet"),
        (["calibration", "create", "--name", "x", "-o", "p.json"], "", "exactly one"),
        (["calibration", "create", "--name", "x", "--measured", "1000=abc", "-o", "p.json"], "", "FREQ=VALUE"),
    ])
    func badInputFailsCleanly(arguments: [String], input: String, message: String) throws {
        try withTemporaryDirectory { dir in
            let result = try runProgram(earshotPath, arguments, input: Data(input.utf8), directory: dir)
            #expect(result.status == 2, "status \(result.status): \(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1 && result.stderr.contains(message), "\(result.stderr)")
            #expect(try contents(of: dir).isEmpty, "nothing written")
        }
    }
}
