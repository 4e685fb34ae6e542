import ArgumentParser
import EarshotCore
import EarshotIO
import Foundation

/// `earshot convert IN -o OUT`: change container, sample format, rate or channel count.
struct Convert: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Convert between audio formats, sample rates and channel counts.",
        discussion: """
            The output format follows the extension of -o (.wav .flac .ogg .aiff .caf). Use - for raw \
            PCM on stdin or stdout, described by the --raw-* options. Resampling uses soxr at very \
            high quality; mono becomes many channels by copying, many become mono by averaging.
            """)

    @Argument(help: "Input file, or - for raw PCM on stdin.")
    var input: String

    @Option(name: .shortAndLong, help: "Output file, or - for raw PCM on stdout.")
    var output: String

    @Option(help: "Output sample rate in Hz (default: the input's).")
    var rate: Double?

    @Option(help: "Output channel count (default: the input's).")
    var channels: Int?

    @Option(help: "Output sample format: \(SampleFormat.allCases.map(\.rawValue).joined(separator: ", ")) (default: the input's when the container allows it).")
    var sampleFormat: SampleFormat?

    @OptionGroup var raw: RawStreamOptions

    func run() throws {
        try OutputPath.refuseOverwriting(output, inputs: [input])
        let source = try raw.endpoints.openSource(input)
        var converted: AudioSource = source
        if let channels, channels != converted.channelCount {
            converted = try ChannelMappedSource(converted, channelCount: channels)
        }
        if let rate {
            try EarshotError.validate(sampleRate: rate)
            if rate != converted.sampleRate { converted = try ResampledSource(converted, sampleRate: rate) }
        }
        let inputFormat = (source as? AudioFileReader)?.info.sampleFormat
        let sink = try raw.endpoints.openSink(
            output, sampleRate: converted.sampleRate, channelCount: converted.channelCount,
            sampleFormat: sampleFormat, inputSampleFormat: inputFormat)
        let total = (source as? AudioFileReader)?.info.frameCount ?? 0
        let progress = ProgressBar(label: "Converting", total: total)
        let chain = ProcessorChain()
        try Runner(blockFrames: 4096, progress: { _ in
            if let reader = source as? AudioFileReader { progress.update(reader.framesRead) }
        }).run(source: converted, chain: chain, sink: sink)
        reportClipping(sink)
        progress.finish()
    }
}

/// The `--raw-*` options: how `-` (headerless PCM on stdin or stdout) is read and written.
struct RawStreamOptions: ParsableArguments {
    @Option(help: "Sample rate of raw PCM on stdin.")
    var rawRate: Double?

    @Option(help: "Channel count of raw PCM on stdin.")
    var rawChannels: Int = 1

    @Option(help: "Raw PCM encoding on stdin and stdout: s16le or f32le.")
    var rawEncoding: RawEncoding = .s16le

    var endpoints: AudioEndpoints {
        AudioEndpoints(rawRate: rawRate, rawChannels: rawChannels, rawEncoding: rawEncoding)
    }
}

extension SampleFormat: ExpressibleByArgument {}
extension RawEncoding: ExpressibleByArgument {}
