import EarshotCore
import EarshotIO
import EarshotTestSupport
import Foundation
import Testing

@Suite struct InfoAndConvertAgreeWithSox {
    struct InfoJSON: Decodable {
        var sampleRate: Double, channels: Int, frames: Int, durationSeconds: Double
        var peakDBFS: Double?, rmsDBFS: Double?, sampleFormat: String?
    }

    /// Files made by sox itself, in several formats.
    static let soxMade: [(name: String, args: [String])] = [
        ("stereo16.wav", ["-r", "44100", "-c", "2", "-b", "16", "stereo16.wav", "synth", "2.5", "sine", "440", "sine", "1000", "gain", "-6"]),
        ("mono24.flac", ["-r", "48000", "-c", "1", "-b", "24", "mono24.flac", "synth", "1.3", "pinknoise", "gain", "-12"]),
        ("float.wav", ["-r", "22050", "-c", "1", "-e", "floating-point", "-b", "32", "float.wav", "synth", "0.7", "square", "300", "gain", "-3"]),
        ("quad.aiff", ["-r", "16000", "-c", "4", "-b", "16", "quad.aiff", "synth", "1", "sine", "200", "gain", "-20"]),
    ]

    @Test(.enabled(if: soxPath != nil), arguments: soxMade.map(\.name))
    func infoMatchesSox(file: String) throws {
        try withTemporaryDirectory { dir in
            let args = Self.soxMade.first { $0.name == file }!.args
            #expect(try runProgram(soxPath!, ["-n"] + args, directory: dir).status == 0)
            let result = try earshot("info", file, "--format", "json", in: dir)
            #expect(result.status == 0, "\(result.stderr)")
            let mine = try JSONDecoder().decode(InfoJSON.self, from: result.stdoutData)
            let header = try sox("--i", file, in: dir).stdout
            #expect(mine.sampleRate == Double(soxField(header, "Sample Rate") ?? ""))
            #expect(mine.channels == Int(soxField(header, "Channels") ?? ""))
            let samples = soxField(header, "Duration")?.split(separator: "=")[1].split(separator: " ").first.flatMap { Int($0) }
            #expect(mine.frames == samples)
            // sox prints stats on stderr; its first column is over all channels.
            let stats = try sox(file, "-n", "stats", in: dir).stderr
            let peak = Double(soxField(stats, "Pk lev dB")!.split(separator: " ")[0])!
            let rms = Double(soxField(stats, "RMS lev dB")!.split(separator: " ")[0])!
            #expect(abs(mine.peakDBFS! - peak) <= 0.011, "peak \(mine.peakDBFS!) vs sox \(peak)")
            #expect(abs(mine.rmsDBFS! - rms) <= 0.011, "rms \(mine.rmsDBFS!) vs sox \(rms)")
        }
    }

    @Test(.enabled(if: soxPath != nil))
    func resamplingAndDownmixMatchSox() throws {
        try withTemporaryDirectory { dir in
            _ = try sox("-n", "-r", "44100", "-c", "2", "-e", "floating-point", "-b", "32", "in.wav",
                        "synth", "3", "sine", "300", "sine", "2500", "gain", "-6", in: dir)
            let mine = try earshot("convert", "in.wav", "-o", "mine.wav", "--rate", "16000", "--channels", "1", in: dir)
            #expect(mine.status == 0, "\(mine.stderr)")
            _ = try sox("in.wav", "-e", "floating-point", "-b", "32", "theirs.wav", "remix", "1v0.5,2v0.5", "rate", "-v", "16000", in: dir)
            let a = try AudioFile.read(path: dir.appendingPathComponent("mine.wav").path)
            let b = try AudioFile.read(path: dir.appendingPathComponent("theirs.wav").path)
            #expect(a.info.sampleRate == 16_000 && a.info.channelCount == 1 && a.info.sampleFormat == .f32)
            #expect(abs(a.info.frameCount - b.info.frameCount) <= 1)
            // Away from the edges the two resamplers agree to better than -80 dB.
            let n = min(a.info.frameCount, b.info.frameCount)
            let x = a.buffer.channel(0), y = b.buffer.channel(0)
            var error = 0.0, signal = 0.0
            for i in 1000..<(n - 1000) {
                error += Double(x[i] - y[i]) * Double(x[i] - y[i])
                signal += Double(y[i]) * Double(y[i])
            }
            #expect(10 * log10(error / signal) < -80, "difference \(10 * log10(error / signal)) dB")
        }
    }

    @Test(.enabled(if: soxPath != nil), arguments: [
        ("out.wav", "s24", "24-bit"), ("out.flac", "s16", "16-bit"), ("out.aiff", "s32", "32-bit"),
        ("out.caf", "f32", "25-bit"),  // sox counts a float's 24-bit mantissa and its sign
        ("out.ogg", "vorbis", nil),
    ])
    func soxReadsWhatConvertWrites(output: String, sampleFormat: String, precision: String?) throws {
        try withTemporaryDirectory { dir in
            _ = try sox("-n", "-r", "48000", "-c", "2", "-b", "16", "in.wav", "synth", "1", "sine", "500", in: dir)
            let result = try earshot("convert", "in.wav", "-o", output, "--sample-format", sampleFormat, in: dir)
            #expect(result.status == 0, "\(result.stderr)")
            let header = try sox("--i", output, in: dir)
            #expect(header.status == 0)
            #expect(soxField(header.stdout, "Channels") == "2")
            #expect(soxField(header.stdout, "Sample Rate") == "48000")
            if let precision { #expect(soxField(header.stdout, "Precision") == precision) }
            #expect(try contents(of: dir) == ["in.wav", output].sorted())
        }
    }
}

@Suite struct RawStreams {
    @Test func pcmThroughStdinAndStdout() throws {
        try withTemporaryDirectory { dir in
            let samples: [Int16] = (0..<16_000).map { Int16(10_000 * sin(2 * Double.pi * 440 * Double($0) / 16_000)) }
            let input = samples.withUnsafeBytes { Data($0) }
            // Raw in, file out, and the file holds exactly the samples.
            let toFile = try earshot("convert", "-", "-o", "x.wav", "--raw-rate", "16000", input: input, in: dir)
            #expect(toFile.status == 0, "\(toFile.stderr)")
            let (info, buffer) = try AudioFile.read(path: dir.appendingPathComponent("x.wav").path)
            #expect(info.frameCount == 16_000 && info.sampleRate == 16_000)
            #expect(zip(buffer.channel(0), samples).allSatisfy { $0 == Float($1) / 32768 })
            // File in, raw out: byte for byte what went in.
            let out = try earshot("convert", "x.wav", "-o", "-", in: dir)
            #expect(out.status == 0 && out.stdoutData == input)
            // Raw to raw at another rate: soxr in a pipe.
            let resampled = try earshot("convert", "-", "-o", "-", "--raw-rate", "16000", "--rate", "8000", input: input, in: dir)
            #expect(resampled.status == 0 && abs(resampled.stdoutData.count - input.count / 2) <= 4)
        }
    }
}

@Suite struct BadInput {
    struct Case: Sendable, CustomTestStringConvertible {
        var arguments: [String]
        var message: String
        var testDescription: String { arguments.joined(separator: " ") }
    }

    static let cases: [Case] = [
        Case(arguments: ["info", "missing.wav"], message: "no such file"),
        Case(arguments: ["info", "text.wav"], message: "not a readable audio file"),
        Case(arguments: ["info", "truncated.wav"], message: "truncated"),
        Case(arguments: ["info", "empty.wav"], message: "contains no audio frames"),
        Case(arguments: ["info", "nan.wav"], message: "NaN or infinite"),
        Case(arguments: ["convert", "nan.wav", "-o", "out.wav"], message: "NaN or infinite"),
        Case(arguments: ["convert", "truncated.wav", "-o", "out.flac"], message: "truncated"),
        Case(arguments: ["convert", "good.wav", "-o", "out.wav", "--rate", "0"], message: "sample rate 0 Hz"),
        Case(arguments: ["convert", "good.wav", "-o", "out.wav", "--rate", "10000000"], message: "sample rate 10000000 Hz"),
        Case(arguments: ["convert", "-", "-o", "out.wav", "--raw-rate", "0"], message: "sample rate 0 Hz"),
        Case(arguments: ["convert", "good.wav", "-o", "out.mp4"], message: "cannot write '.mp4'"),
        Case(arguments: ["convert", "good.wav", "-o", "out.flac", "--sample-format", "f32"], message: "FLAC cannot hold f32"),
        Case(arguments: ["convert", "good.wav", "-o", "out.wav", "--channels", "0"], message: "channel count 0"),
        Case(arguments: ["convert", "stereo.wav", "-o", "out.wav", "--channels", "6"], message: "cannot map 2 channels to 6"),
        Case(arguments: ["convert", "good.wav", "-o", "missing-dir/out.wav"], message: "does not exist"),
        Case(arguments: ["record", "-o", "out.wav", "--seconds", "1", "--input-device", "no-such-device"], message: "device"),
        Case(arguments: ["record", "-o", "out.wav", "--seconds", "-1"], message: "--seconds"),
        Case(arguments: ["play", "good.wav", "--output-device", "no-such-device"], message: "device"),
        Case(arguments: ["play", "good.wav", "--max-output-dbfs", "3"], message: "--max-output-dbfs must be between -60 and 0, not 3.0"),
        Case(arguments: ["listen", "good.wav", "-o", "out.wav", "--max-output-dbfs", "nan"], message: "--max-output-dbfs must be between -60 and 0"),
        Case(arguments: ["room", "measure", "-o", "ir.wav", "--max-output-dbfs", "-70"], message: "--max-output-dbfs must be between -60 and 0"),
        Case(arguments: ["convert", "good.wav", "-o", "out.wav", "--rate", "fast"], message: "'fast' is invalid"),
        // An output that is the input, however named: refused, the recording intact.
        Case(arguments: ["enhance", "good.wav", "-o", "good.wav"], message: "the output good.wav is the input good.wav"),
        Case(arguments: ["convert", "good.wav", "-o", "./good.wav"], message: "is the input"),
        Case(arguments: ["convert", "link.wav", "-o", "good.wav"], message: "is the input"),
        Case(arguments: ["listen", "good.wav", "-o", "good.wav"], message: "is the input"),
        Case(arguments: ["listen", "good.wav", "-o", "out.wav", "--events", "good.wav"], message: "is the input"),
        Case(arguments: ["amplify", "good.wav", "-o", "good.wav", "--audiogram", "missing.json"], message: "is the input"),
        Case(arguments: ["aec", "--mic", "good.wav", "--far", "stereo.wav", "-o", "stereo.wav"], message: "is the input"),
        Case(arguments: ["capture", "good.wav", "-o", "good.wav"], message: "is the input"),
        Case(arguments: ["room", "iterate", "good.wav", "--ir", "stereo.wav", "--generations", "2", "-o", "stereo.wav"], message: "is the input"),
        Case(arguments: ["room", "measure", "--recorded", "good.wav", "-o", "good.wav"], message: "is the input"),
    ]

    /// A directory of bad (and one good) input files.
    func prepare(_ dir: URL) throws {
        try "not audio at all\n".write(to: dir.appendingPathComponent("text.wav"), atomically: true, encoding: .utf8)
        let good = dir.appendingPathComponent("good.wav").path
        try AudioFile.write(AudioBuffer(channels: [(0..<16_000).map { Float(sin(Double($0) / 10)) * 0.5 }]), to: good, sampleRate: 16_000)
        try AudioFile.write(AudioBuffer(channels: [[0.1, 0.2], [0.3, 0.4]]), to: dir.appendingPathComponent("stereo.wav").path, sampleRate: 16_000)
        try Data(try Data(contentsOf: URL(fileURLWithPath: good)).prefix(10_000)).write(to: dir.appendingPathComponent("truncated.wav"))
        try writeFloatWAV([], to: dir.appendingPathComponent("empty.wav"))
        try writeFloatWAV([0.1, .nan, 0.2], to: dir.appendingPathComponent("nan.wav"))
        try FileManager.default.createSymbolicLink(atPath: dir.appendingPathComponent("link.wav").path, withDestinationPath: "good.wav")
    }

    @Test(arguments: cases)
    func failsCleanly(_ c: Case) throws {
        try withTemporaryDirectory { dir in
            try prepare(dir)
            let before = try contents(of: dir)
            let result = try runProgram(earshotPath, c.arguments, input: Data([1, 2, 3]), directory: dir)
            #expect(result.status == 2, "exit status \(result.status)")
            let lines = result.stderr.split(separator: "\n")
            #expect(lines.count == 1, "one line on stderr, got: \(result.stderr)")
            #expect(result.stderr.hasPrefix("earshot: ") && result.stderr.contains(c.message), "\(result.stderr)")
            #expect(result.stdout.isEmpty)
            #expect(try contents(of: dir) == before, "no output file, no temporary file")
        }
    }
}

@Suite struct Commands {
    @Test func versionAndHelp() throws {
        let version = try earshot("--version")
        #expect(version.status == 0 && version.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "0.1.0")
        let help = try earshot("--help")
        #expect(help.status == 0)
        for name in ["info", "convert", "devices", "record", "play", "demo"] { #expect(help.stdout.contains(name)) }
    }

    @Test func devicesAlwaysAnswers() throws {
        let text = try earshot("devices")
        #expect(text.status == 0)
        #expect(text.stdout.contains("No audio devices found") || text.stdout.contains("Inputs:"))
        let json = try earshot("devices", "--format", "json")
        #expect(json.status == 0)
        #expect(try JSONSerialization.jsonObject(with: json.stdoutData) is [Any])
    }

    /// The bundled scene: every alert heard, and each reaches the output within 1 dB with the
    /// separator, less without it.
    @Test func demoHearsEveryAlertAndKeepsIt() throws {
        try withTemporaryDirectory { dir in
            let result = try earshot("demo", "--format", "json", "-o", "scene.wav", in: dir)
            #expect(result.status == 0, "\(result.stderr)")
            struct Report: Decodable {
                struct Alert: Decodable { var `class`: String; var detected: Bool; var keptDB: Double; var keptWithoutSeparatorDB: Double }
                var alerts: [Alert]
                struct Event: Decodable { var `class`: String; var start: Double; var end: Double; var confidence: Double }
                var events: [Event]
            }
            let report = try JSONDecoder().decode(Report.self, from: result.stdoutData)
            #expect(report.alerts.count >= 3 && report.events.count == report.alerts.count)
            for alert in report.alerts {
                #expect(alert.detected && alert.keptDB > -1, "\(alert)")
                #expect(alert.keptWithoutSeparatorDB < alert.keptDB, "\(alert)")
            }
            #expect(try contents(of: dir) == ["scene.wav"])
            let text = try earshot("demo")
            #expect(text.status == 0 && text.stdout.contains("Heard as it played:"))
        }
    }

    @Test func synthesisedAlertsAreWrittenAndReproducible() throws {
        try withTemporaryDirectory { dir in
            for alertClass in ["siren", "smoke_alarm", "car_horn", "doorbell"] {
                let first = try earshot("synth", "alert", "--class", alertClass, "--seed", "5", "-o", "\(alertClass).wav", in: dir)
                #expect(first.status == 0, "\(first.stderr)")
                let again = try earshot("synth", "alert", "--class", alertClass, "--seed", "5", "-o", "again.wav", in: dir)
                #expect(again.status == 0)
                let a = try Data(contentsOf: dir.appendingPathComponent("\(alertClass).wav"))
                #expect(a == (try Data(contentsOf: dir.appendingPathComponent("again.wav"))), "same seed, same file")
            }
            let bad = try earshot("synth", "alert", "--class", "siren", "--rate", "0", "-o", "x.wav", in: dir)
            #expect(bad.status == 2 && bad.stderr.contains("sample rate 0 Hz"))
        }
    }

    @Test func sceneAndLabelsAreWritten() throws {
        try withTemporaryDirectory { dir in
            let result = try earshot("synth", "scene", "--seed", "2", "--duration", "15", "--alerts-per-minute", "12", "--data", "no-such-folder",
                                     "-o", "scene.wav", "--labels", "labels.json", in: dir)
            #expect(result.status == 0, "\(result.stderr)")
            let info = try AudioFile.read(path: dir.appendingPathComponent("scene.wav").path).info
            #expect(info.sampleRate == 16_000 && info.frameCount == 15 * 16_000)
            let labels = try JSONSerialization.jsonObject(with: Data(contentsOf: dir.appendingPathComponent("labels.json"))) as! [[String: Any]]
            #expect(!labels.isEmpty)
            #expect(labels.allSatisfy { ["siren", "smoke_alarm", "car_horn", "doorbell"].contains($0["class"] as! String) })
            #expect(labels.allSatisfy { ($0["start"] as! Double) < ($0["end"] as! Double) })
        }
    }

    @Test func clippingIsReportedNotSilent() throws {
        try withTemporaryDirectory { dir in
            try writeFloatWAV([0.5, 1.5, -2, 0.25], to: dir.appendingPathComponent("hot.wav"))
            let clipped = try earshot("convert", "hot.wav", "-o", "out.wav", "--sample-format", "s16", in: dir)
            #expect(clipped.status == 0 && clipped.stderr.contains("2 samples beyond full scale were clipped"), "\(clipped.stderr)")
            let kept = try earshot("convert", "hot.wav", "-o", "float.wav", "--sample-format", "f32", in: dir)
            #expect(kept.status == 0 && kept.stderr.isEmpty)
        }
    }

    @Test func silentFileHasNoLevel() throws {
        try withTemporaryDirectory { dir in
            try AudioFile.write(AudioBuffer(channels: [[Float](repeating: 0, count: 100)]),
                                to: dir.appendingPathComponent("silence.wav").path, sampleRate: 8000)
            let text = try earshot("info", "silence.wav", in: dir)
            #expect(text.status == 0 && text.stdout.contains("-inf dBFS"))
            let json = try earshot("info", "silence.wav", "--format", "json", in: dir)
            #expect(json.status == 0 && !json.stdout.contains("peakDBFS\":-"))
            // One format vocabulary: jsonl is json's other name for a single value.
            #expect(try earshot("info", "silence.wav", "--format", "jsonl", in: dir).stdout == json.stdout)
            let wrong = try earshot("info", "silence.wav", "--format", "yaml", in: dir)
            #expect(wrong.status != 0 && wrong.stderr.contains("text") && wrong.stderr.contains("jsonl"), "\(wrong.stderr)")
        }
    }
}
