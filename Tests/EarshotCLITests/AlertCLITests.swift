import EarshotIO
import EarshotTestSupport
import Foundation
import Testing

@Suite struct AlertCommands {
    struct Event: Decodable, Equatable { var `class`: String; var start: Double; var end: Double; var confidence: Double }
    struct Label: Decodable { var `class`: String; var start: Double; var end: Double; var snr: Double }

    func events(_ jsonl: String) throws -> [Event] {
        try jsonl.split(separator: "\n").map { try JSONDecoder().decode(Event.self, from: Data($0.utf8)) }
    }

    /// A synthesised scene (no recordings needed): every alert at 5 dB SNR or more is found,
    /// with its class, at 16 kHz and again after resampling to 48 kHz; listen reports the same.
    @Test func detectFindsTheAlertsOfAScene() throws {
        try withTemporaryDirectory { dir in
            let made = try earshot("synth", "scene", "--seed", "11", "--duration", "40", "--alerts-per-minute", "8", "--data", "nowhere",
                                   "-o", "scene.wav", "--labels", "labels.json", in: dir)
            #expect(made.status == 0, "\(made.stderr)")
            let labels = try JSONDecoder().decode([Label].self, from: Data(contentsOf: dir.appendingPathComponent("labels.json")))
            let detected = try earshot("detect", "scene.wav", "--format", "jsonl", in: dir)
            #expect(detected.status == 0, "\(detected.stderr)")
            let found = try events(detected.stdout)
            let audible = labels.filter { $0.snr >= 5 }
            #expect(!audible.isEmpty)
            for label in audible {
                #expect(found.contains { $0.class == label.class && $0.start <= label.end + 1 && $0.end >= label.start },
                        "\(label.class) at \(label.start) s, \(label.snr) dB: found \(found)")
            }
            for event in found { #expect(event.confidence > 0 && event.confidence <= 1 && event.end >= event.start) }

            // One format vocabulary: json is jsonl's other name for a stream of events.
            #expect(try earshot("detect", "scene.wav", "--format", "json", in: dir).stdout == detected.stdout)

            #expect(try earshot("convert", "scene.wav", "-o", "scene48.wav", "--rate", "48000", in: dir).status == 0)
            let resampled = try events(try earshot("detect", "scene48.wav", "--format", "jsonl", in: dir).stdout)
            for label in audible {
                #expect(resampled.contains { $0.class == label.class && $0.start <= label.end + 1 && $0.end >= label.start },
                        "at 48 kHz, \(label.class) at \(label.start) s, \(label.snr) dB: found \(resampled)")
            }

            let listened = try earshot("listen", "scene.wav", "-o", "out.wav", "--events", "events.jsonl", in: dir)
            #expect(listened.status == 0, "\(listened.stderr)")
            let logged = try events(String(decoding: try Data(contentsOf: dir.appendingPathComponent("events.jsonl")), as: UTF8.self))
            #expect(logged == found, "listen and detect hear the same")
            if let first = found.first { #expect(listened.stderr.contains(first.class)) }
        }
    }

    /// --sensitivity and --thresholds are checked before any audio is read: a bad value is one
    /// line and exit 2; good ones run.
    @Test func sensitivityOptionsAreChecked() throws {
        try withTemporaryDirectory { dir in
            try writeFloatWAV(noise(count: 32_000, seed: 5, amplitude: 0.05), to: dir.appendingPathComponent("noise.wav"))
            try Data("{\"siren\":0.97,\"doorbell\":0.9}".utf8).write(to: dir.appendingPathComponent("good.json"))
            try Data("{\"siren\":true}".utf8).write(to: dir.appendingPathComponent("bool.json"))
            try Data("{\"siren\":1.5}".utf8).write(to: dir.appendingPathComponent("range.json"))
            try Data("[0.5]".utf8).write(to: dir.appendingPathComponent("array.json"))
            for options in [["--sensitivity", "siren=1.5"], ["--sensitivity", "horn=0.5"], ["--sensitivity", "siren"],
                            ["--thresholds", "missing.json"], ["--thresholds", "bool.json"], ["--thresholds", "range.json"],
                            ["--thresholds", "array.json"]] {
                let result = try runProgram(earshotPath, ["detect", "noise.wav"] + options, directory: dir)
                #expect(result.status == 2 && result.stderr.split(separator: "\n").count == 1, "\(options): \(result.stderr)")
            }
            let fine = try earshot("detect", "noise.wav", "--thresholds", "good.json", "--sensitivity", "car_horn=0.2,smoke_alarm=0.3", in: dir)
            #expect(fine.status == 0, "\(fine.stderr)")
            let listen = try earshot("listen", "noise.wav", "-o", "out.wav", "--sensitivity", "doorbell=2", in: dir)
            #expect(listen.status == 2)
            #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("out.wav").path))
        }
    }

    @Test func detectRefusesWhatItCannotRead() throws {
        try withTemporaryDirectory { dir in
            try writeFloatWAV([], to: dir.appendingPathComponent("empty.wav"))
            try writeFloatWAV([0.1, .nan, 0.2], to: dir.appendingPathComponent("nan.wav"))
            try Data("not audio".utf8).write(to: dir.appendingPathComponent("text.wav"))
            for (file, message) in [("missing.wav", "missing.wav"), ("empty.wav", "no audio"), ("nan.wav", "NaN"), ("text.wav", "text.wav")] {
                let result = try earshot("detect", file, in: dir)
                #expect(result.status == 2 && result.stdout.isEmpty, "\(file): \(result.status)")
                #expect(result.stderr.contains(message) && result.stderr.split(separator: "\n").count == 1, "\(file): \(result.stderr)")
            }
            let badFormat = try earshot("detect", "empty.wav", "--format", "xml", in: dir)
            #expect(badFormat.status == 2)
            let listen = try earshot("listen", "nan.wav", "-o", "out.wav", "--events", "events.jsonl", in: dir)
            #expect(listen.status == 2)
            #expect(try contents(of: dir) == ["empty.wav", "nan.wav", "text.wav"], "nothing half-written")
        }
    }
}
