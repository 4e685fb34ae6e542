import ArgumentParser
import EarshotAlerts
import EarshotCore
import EarshotHubClient
import EarshotSynthesis
import Foundation

/// `earshot demo`: the listening chain end to end on the bundled scene (`ListeningDemo`).
struct Demo: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the listening chain on Earshot's bundled scene and report what it hears.")

    @Option(help: "Scene seed: the same seed always gives the same scene.")
    var seed: UInt64 = 9

    @Option(name: .shortAndLong, help: "Keep the scene as this file (default: a temporary file, removed afterwards).")
    var output: String?

    @Option(help: OutputStyle.help)
    var format: OutputStyle = .text

    struct Report: Codable {
        var scenePath: String?, sampleRate: Double, durationSeconds: Double, latencySamples: Int
        var alerts: [ListeningDemo.Alert], events: [EventRecord]
    }

    func run() throws {
        let rate = ListeningDemo.sampleRate
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("earshot-demo-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        if format == .text {
            print("Earshot \(Earshot.version) demo — scene seed \(seed): \(Int(ListeningDemo.durationSeconds)) s at \(Int(rate)) Hz; chain: alert detector → noise suppressor with alert separation")
            print("Heard as it played:")
        }
        let demo = try ListeningDemo(seed: seed, sceneFile: output ?? directory.appendingPathComponent("scene.wav").path) { change in
            if case .began(let event) = change, format == .text {
                print(String(format: "  %6.2f s  %@ (confidence %.2f)", event.start, event.alertClass.rawValue, event.confidence))
            }
        }
        if format.isJSON {
            return try Terminal.printJSON(Report(scenePath: output, sampleRate: rate, durationSeconds: demo.durationSeconds, latencySamples: demo.latencySamples,
                                                 alerts: demo.alerts, events: demo.events.map(EventRecord.init)))
        }
        print("Placed in the scene, and what reached the output (level out − in over the alert):")
        print("  start–end s      class         SNR    detected  alert kept  without separator  speech+noise")
        for alert in demo.alerts {
            print(String(format: "  %5.2f–%5.2f  ", alert.start, alert.end) + alert.class.padding(toLength: 12, withPad: " ", startingAt: 0)
                  + String(format: "  %+5.1f dB  %@  %+6.1f dB   %+6.1f dB          %+6.1f dB",
                           alert.snr, alert.detected ? "yes     " : "no      ", alert.keptDB, alert.keptWithoutSeparatorDB, alert.restDB))
        }
        print(String(format: "Chain delay %.1f ms.", Double(demo.latencySamples) / rate * 1000))
        if let output {
            print("Scene kept at \(output). Try: earshot listen \(shellWord(output)) -o out.wav --events events.jsonl")
        } else {
            print("Try it yourself: earshot demo -o scene.wav keeps the scene; then earshot listen scene.wav -o out.wav --events events.jsonl")
        }
    }
}
