import ArgumentParser
import EarshotCore
import EarshotIO
import Foundation

/// `earshot info FILE`: what a file holds and how loud it is.
struct Info: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show an audio file's format, length and levels.",
        discussion: "Levels are dBFS: 20·log10 of the peak or RMS amplitude, as sox reports them.")

    @Argument(help: "Any file libsndfile reads (WAV, FLAC, OGG, AIFF, CAF, …).") var file: String
    @Option(help: OutputStyle.help) var format: OutputStyle = .text

    func run() throws {
        let reader = try AudioFileReader(path: file)
        let progress = ProgressBar(label: "Measuring", total: reader.info.frameCount)
        let report = try AudioFileSummary(reader, progress: progress.update)
        progress.finish()
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

/// `earshot convert IN -o OUT`: change container, sample format, rate or channel count.
struct Convert: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Convert between audio formats, sample rates and channel counts.",
        discussion: """
            The output format follows the extension of -o (.wav .flac .ogg .aiff .caf). Use - for raw \
            PCM on stdin or stdout, described by the --raw-* options. Resampling uses soxr at very \
            high quality; mono becomes many channels by copying, many become mono by averaging.
            """)

    @Argument(help: "Input file, or - for raw PCM on stdin.") var input: String
    @Option(name: .shortAndLong, help: "Output file, or - for raw PCM on stdout.") var output: String
    @Option(help: "Output sample rate in Hz (default: the input's).") var rate: Double?
    @Option(help: "Output channel count (default: the input's).") var channels: Int?
    @Option(help: "Output sample format: \(SampleFormat.allCases.map(\.rawValue).joined(separator: ", ")) (default: the input's when the container allows it).")
    var sampleFormat: SampleFormat?
    @OptionGroup var raw: RawStreamOptions

    func run() throws {
        try OutputPath.refuseOverwriting(output, inputs: [input])
        let progress = ProgressBar(label: "Converting")
        reportClipping(try raw.endpoints.convert(input, to: output, rate: rate, channels: channels, sampleFormat: sampleFormat, progress: progress.update))
        progress.finish()
    }
}

/// The `--raw-*` options: how `-` (headerless PCM on stdin or stdout) is read and written.
struct RawStreamOptions: ParsableArguments {
    @Option(help: "Sample rate of raw PCM on stdin.") var rawRate: Double?
    @Option(help: "Channel count of raw PCM on stdin.") var rawChannels: Int = 1
    @Option(help: "Raw PCM encoding on stdin and stdout: s16le or f32le.") var rawEncoding: RawEncoding = .s16le
    var endpoints: AudioEndpoints {
        AudioEndpoints(rawRate: rawRate, rawChannels: rawChannels, rawEncoding: rawEncoding)
    }
}

extension SampleFormat: ExpressibleByArgument {}
extension RawEncoding: ExpressibleByArgument {}

/// `earshot record -o OUT --seconds N`: capture from an input device to a file.
struct Record: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Record from an input device into a file.",
        discussion: "Ctrl-C stops early and keeps what was recorded.")

    @Option(name: .shortAndLong, help: "Output file (.wav .flac .ogg .aiff .caf).") var output: String
    @Option(help: "How long to record, in seconds.") var seconds: Double
    @OptionGroup var inputDevice: InputDeviceOption
    @Option(help: "Sample rate in Hz.") var rate: Double = 48_000
    @Option(help: "Channel count.") var channels: Int = 1
    @Option(help: "Sample format (default: s16; f32 for .caf).") var sampleFormat: SampleFormat?

    func run() throws {
        guard seconds.isFinite, seconds > 0, seconds <= 24 * 3600 else {
            throw EarshotError.invalidArgument("--seconds must be between 0 and 86400, not \(seconds)")
        }
        try EarshotError.validate(sampleRate: rate)
        // Check everything about the output before touching the device.
        let sink = try AudioEndpoints().openSink(output, sampleRate: rate, channelCount: channels, sampleFormat: sampleFormat)
        let input = try inputDevice.find()
        installInterruptHandler()
        let progress = ProgressBar(label: "Recording from \(input.name)", total: Int(seconds * rate))
        let recorded = try DeviceCapture.record(from: input, sampleRate: rate, channelCount: channels, seconds: seconds, into: sink,
                                                stop: interruptRequested, progress: progress.update)
        reportClipping(sink)
        progress.finish()
        if recorded.lostSamples > 0 { Terminal.note("warning: \(recorded.lostSamples) samples were lost because the disk could not keep up") }
        Terminal.note("Recorded \(String(format: "%.2f", recorded.seconds)) s to \(output)")
    }
}

/// `earshot play FILE`: play a file on an output device, never louder than the ceiling.
struct Play: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Play an audio file on an output device.",
        discussion: "Output passes through a level guard: no sample exceeds --max-output-dbfs.")

    @Argument(help: "Any file libsndfile reads.") var file: String
    @OptionGroup var outputDevice: OutputDeviceOption
    @OptionGroup var ceiling: OutputCeilingOption

    func run() throws {
        let reader = try AudioFileReader(path: file)
        let output = try outputDevice.find()
        installInterruptHandler()
        let progress = ProgressBar(label: "Playing on \(output.name)", total: reader.info.frameCount)
        let dry = try DevicePlayback.play(reader, on: output, through: ceiling.guardStage, stop: interruptRequested) { _ in progress.update(reader.framesRead) }
        progress.finish()
        if dry > 0 { Terminal.note("warning: the device ran dry for \(dry) samples") }
    }
}

/// `earshot devices`: the inputs and outputs Earshot can use.
struct Devices: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List audio input and output devices.")

    @Option(help: OutputStyle.help) var format: OutputStyle = .text

    func run() throws {
        let devices = try AudioDevices.all()
        if format.isJSON { return try Terminal.printJSON(devices) }
        guard !devices.isEmpty else {
            print("No audio devices found: no sound card, or no permission to use one. Files and raw PCM (-) still work.")
            return
        }
        for (title, list) in [("Inputs", devices.filter { $0.inputChannels > 0 }), ("Outputs", devices.filter { $0.outputChannels > 0 })] {
            print("\(title):")
            if list.isEmpty { print("  (none)") }
            for d in list {
                let channels = title == "Inputs" ? d.inputChannels : d.outputChannels
                let isDefault = title == "Inputs" ? d.isDefaultInput : d.isDefaultOutput
                print("  [\(d.index)] \(d.name) — \(d.hostAPI), \(channels) ch, \(Int(d.defaultSampleRate)) Hz\(isDefault ? " (default)" : "")")
            }
        }
    }
}
