import ArgumentParser
import EarshotAlerts
import EarshotCore
import EarshotIO
import Foundation

/// `earshot demo`: the engine end to end on the bundled scene — synthesised from a seed,
/// written to a file, read back and analysed as any recording would be.
struct Demo: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run Earshot on its bundled scene (a doorbell and a smoke alarm in a quiet room) and report what it finds.")

    @Option(help: "Scene seed: the same seed always gives the same scene.")
    var seed: UInt64 = 1

    @Option(help: "Keep the scene as this file (default: a temporary file, removed afterwards).")
    var scene: String?

    @Option(help: "Output format: text or json.")
    var format: OutputStyle = .text

    struct Report: Codable {
        var scenePath: String?
        var sampleRate: Double
        var durationSeconds: Double
        var noiseFloorDBFS: Double
        var events: [SoundEvent]
        var latencySamples: Int
    }

    func run() throws {
        let demo = DemoScene(seed: seed)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("earshot-demo-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = scene ?? directory.appendingPathComponent("scene.wav").path
        try AudioFile.write(AudioBuffer(channels: [demo.samples]), to: path, sampleRate: demo.sampleRate)

        let reader = try AudioFileReader(path: path)
        var detector = SoundActivityDetector()
        let report = try Runner(blockFrames: 256).run(source: reader, chain: &detector, sink: MemorySink(channelCount: 1))
        detector.finish()

        let result = Report(
            scenePath: scene, sampleRate: reader.sampleRate, durationSeconds: reader.info.durationSeconds,
            noiseFloorDBFS: (detector.noiseFloorDBFS * 10).rounded() / 10, events: detector.events,
            latencySamples: report.latencySamples)
        if format == .json {
            try Terminal.printJSON(result)
            return
        }
        print("Earshot \(Earshot.version) demo — scene seed \(seed): \(String(format: "%.1f", result.durationSeconds)) s at \(Int(result.sampleRate)) Hz, mono")
        print("Placed in the scene:")
        for placed in demo.placements {
            print("  \(String(format: "%5.2f", placed.startSeconds)) s  \(placed.name)")
        }
        print("Found \(result.events.count) sound event(s) above a background of \(String(format: "%.1f", result.noiseFloorDBFS)) dBFS:")
        for event in result.events {
            let tones = event.dominantFrequenciesHz.map { "\(Int($0)) Hz" }.joined(separator: ", ")
            print("  \(String(format: "%5.2f", event.startSeconds))–\(String(format: "%.2f", event.endSeconds)) s  peak \(String(format: "%.1f", event.peakLevelDBFS)) dBFS  strongest: \(tones)")
        }
        if let scene { print("Scene kept at \(scene)") }
    }
}
