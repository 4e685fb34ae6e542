import ArgumentParser
import EarshotAlerts
import EarshotCore
import EarshotHearingAid
import EarshotHubClient
import EarshotIO
import EarshotSynthesis
import Foundation

/// `earshot demo`: the listening chain end to end on the bundled scene — synthesised from a
/// seed, written to a file and read back as any recording would be: alerts detected as they
/// happen, and how much of each reaches the ears with and without the separator.
struct Demo: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the listening chain on Earshot's bundled scene and report what it hears.")

    @Option(help: "Scene seed: the same seed always gives the same scene.")
    var seed: UInt64 = 9

    @Option(name: .shortAndLong, help: "Keep the scene as this file (default: a temporary file, removed afterwards).")
    var output: String?

    @Option(help: OutputStyle.help)
    var format: OutputStyle = .text

    struct Alert: Codable {
        var `class`: String
        var start: Double
        var end: Double
        var snr: Double
        var detected: Bool
        /// Alert level out − in over the alert, with the separator and without it, dB.
        var keptDB: Double
        var keptWithoutSeparatorDB: Double
        /// The rest (speech and noise) out − in over the alert, dB.
        var restDB: Double
    }

    struct Report: Codable {
        var scenePath: String?
        var sampleRate: Double
        var durationSeconds: Double
        var latencySamples: Int
        var alerts: [Alert]
        var events: [EventRecord]
    }

    func run() throws {
        let rate = 16_000.0
        let generated = try SceneGenerator.generate(seed: seed, durationSeconds: 40, sampleRate: rate, material: SceneMaterial(), alertsPerMinute: 6)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("earshot-demo-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = output ?? directory.appendingPathComponent("scene.wav").path
        try AudioFile.write(AudioBuffer(channels: [generated.samples]), to: path, sampleRate: rate, sampleFormat: .f32)

        // The mix as a recording; its alert and the rest ride along as probe channels.
        let (info, buffer) = try AudioFile.read(path: path)
        let mix = buffer.toArrays()[0]
        let network = try AlertNetwork.bundled()
        if format == .text {
            print("Earshot \(Earshot.version) demo — scene seed \(seed): \(String(format: "%.0f", info.durationSeconds)) s at \(Int(rate)) Hz; chain: alert detector → noise suppressor with alert separation")
            print("Heard as it played:")
        }
        var events: [AlertEvent] = []
        func heard(_ change: AlertEventTracker.Change) {
            switch change {
            case .began(let event) where format == .text:
                print(String(format: "  %6.2f s  %@ (confidence %.2f)", event.start, event.alertClass.rawValue, event.confidence))
            case .ended(let event): events.append(event)
            default: break
            }
        }
        var detector: AlertDetector?
        let with = try AlertProbe(mix: mix, alerts: generated.alerts, sampleRate: rate, network: network, separate: true) {
            detector = $0
            $0.takeChanges(heard)
        }
        detector?.finish(heard)
        let without = try AlertProbe(mix: mix, alerts: generated.alerts, sampleRate: rate, network: network, separate: false)

        let alerts = generated.labels.map { label -> Alert in
            let range = Int(label.start * rate)..<min(mix.count, Int(label.end * rate))
            return Alert(
                class: label.alertClass.rawValue, start: label.start, end: label.end, snr: label.snrDB,
                detected: events.contains { $0.alertClass == label.alertClass && $0.start <= label.end + 1 && $0.end >= label.start },
                keptDB: with.alertChangeDB(over: range), keptWithoutSeparatorDB: without.alertChangeDB(over: range),
                restDB: with.restChangeDB(over: range))
        }
        let result = Report(
            scenePath: output, sampleRate: rate, durationSeconds: info.durationSeconds, latencySamples: with.latencySamples, alerts: alerts,
            events: events.map(EventRecord.init))
        if format.isJSON {
            try Terminal.printJSON(result)
            return
        }
        print("Placed in the scene, and what reached the output (level out − in over the alert):")
        print("  start–end s      class         SNR    detected  alert kept  without separator  speech+noise")
        for alert in alerts {
            let name = alert.class.padding(toLength: 12, withPad: " ", startingAt: 0)
            print(String(format: "  %5.2f–%5.2f  ", alert.start, alert.end) + name
                  + String(format: "  %+5.1f dB  %@  %+6.1f dB   %+6.1f dB          %+6.1f dB",
                           alert.snr, alert.detected ? "yes     " : "no      ", alert.keptDB, alert.keptWithoutSeparatorDB, alert.restDB))
        }
        print(String(format: "Chain delay %.1f ms.", Double(with.latencySamples) / rate * 1000))
        if let output {
            print("Scene kept at \(output). Try: earshot listen \(shellWord(output)) -o out.wav --events events.jsonl")
        } else {
            print("Try it yourself: earshot demo -o scene.wav keeps the scene; then earshot listen scene.wav -o out.wav --events events.jsonl")
        }
    }
}
