import ArgumentParser
import EarshotCore
import EarshotDSP
import EarshotIO
import Foundation

/// `earshot info FILE`: what a file holds and how loud it is.
struct Info: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show an audio file's format, length and levels.",
        discussion: "Levels are dBFS: 20·log10 of the peak or RMS amplitude, as sox reports them.")

    @Argument(help: "Any file libsndfile reads (WAV, FLAC, OGG, AIFF, CAF, …).")
    var file: String

    @Option(help: OutputStyle.help)
    var format: OutputStyle = .text

    struct Report: Codable {
        var path: String
        var container: String
        var encoding: String
        var sampleFormat: String?
        var sampleRate: Double
        var channels: Int
        var frames: Int
        var durationSeconds: Double
        /// nil for digital silence (minus infinity has no JSON spelling).
        var peakDBFS: Double?
        var rmsDBFS: Double?
        var channelPeakDBFS: [Double?]
        var channelRMSDBFS: [Double?]
    }

    func run() throws {
        let reader = try AudioFileReader(path: file)
        let info = reader.info
        var meter = LevelMeter(channelCount: info.channelCount)
        let buffer = AudioBuffer(channelCount: info.channelCount, capacityFrames: 65_536)
        let progress = ProgressBar(label: "Measuring", total: info.frameCount)
        while true {
            let got = try reader.read(into: buffer.block())
            if got == 0 { break }
            meter.measure(buffer.block(frameCount: got))
            progress.update(reader.framesRead)
        }
        progress.finish()
        let decibels = { (x: Double) -> Double? in x > 0 ? (Decibels.fromAmplitude(x) * 100).rounded() / 100 : nil }
        let report = Report(
            path: info.path, container: info.containerName, encoding: info.encodingName,
            sampleFormat: info.sampleFormat?.rawValue, sampleRate: info.sampleRate, channels: info.channelCount,
            frames: info.frameCount, durationSeconds: info.durationSeconds,
            peakDBFS: decibels(meter.peak), rmsDBFS: decibels(meter.rms),
            channelPeakDBFS: (0..<info.channelCount).map { decibels(meter.peak(channel: $0)) },
            channelRMSDBFS: (0..<info.channelCount).map { decibels(meter.rms(channel: $0)) })
        switch format {
        case .json, .jsonl:
            try Terminal.printJSON(report)
        case .text:
            print("""
                File:         \(report.path)
                Format:       \(report.container), \(report.encoding)
                Sample rate:  \(Int(report.sampleRate)) Hz
                Channels:     \(report.channels)
                Frames:       \(report.frames)
                Duration:     \(String(format: "%.3f", report.durationSeconds)) s
                Peak:         \(Self.format(report.peakDBFS)) dBFS
                RMS:          \(Self.format(report.rmsDBFS)) dBFS
                """)
        }
    }

    static func format(_ decibels: Double?) -> String {
        decibels.map { String(format: "%.2f", $0) } ?? "-inf"
    }
}

/// The one `--format` of every command: text for people; json and jsonl alike for programs, one
/// JSON value (a command that prints events prints one per line).
enum OutputStyle: String, ExpressibleByArgument, CaseIterable {
    case text, json, jsonl

    var isJSON: Bool { self != .text }

    static let help = ArgumentHelp("Output format: text, or json (or jsonl, the same: one JSON value per line).")
}
