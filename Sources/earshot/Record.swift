import ArgumentParser
import EarshotCore
import EarshotIO

/// `earshot record -o OUT --seconds N`: capture from an input device to a file.
struct Record: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Record from an input device into a file.",
        discussion: "Ctrl-C stops early and keeps what was recorded.")

    @Option(name: .shortAndLong, help: "Output file (.wav .flac .ogg .aiff .caf).")
    var output: String

    @Option(help: "How long to record, in seconds.")
    var seconds: Double

    @OptionGroup var inputDevice: InputDeviceOption

    @Option(help: "Sample rate in Hz.")
    var rate: Double = 48_000

    @Option(help: "Channel count.")
    var channels: Int = 1

    @Option(help: "Sample format (default: s16; f32 for .caf).")
    var sampleFormat: SampleFormat?

    func run() throws {
        guard seconds.isFinite, seconds > 0, seconds <= 24 * 3600 else {
            throw EarshotError.invalidArgument("--seconds must be between 0 and 86400, not \(seconds)")
        }
        try EarshotError.validate(sampleRate: rate)
        // Check everything about the output before touching the device.
        let sink = try AudioEndpoints().openSink(output, sampleRate: rate, channelCount: channels, sampleFormat: sampleFormat)
        let input = try inputDevice.find()
        installInterruptHandler()
        let capture = try DeviceCapture(device: input, sampleRate: rate, channelCount: channels, stop: interruptRequested)
        let total = Int(seconds * rate)
        let progress = ProgressBar(label: "Recording from \(input.name)", total: total)
        let chain = ProcessorChain()
        let report = try Runner(
            blockFrames: 1024, compensateLatency: false, maximumFrames: total, stop: interruptRequested,
            progress: progress.update
        ).run(source: capture, chain: chain, sink: sink)
        reportClipping(sink)
        capture.close()
        progress.finish()
        if capture.overflowSamples > 0 {
            Terminal.note("warning: \(capture.overflowSamples) samples were lost because the disk could not keep up")
        }
        Terminal.note("Recorded \(String(format: "%.2f", Double(report.inputFrames) / rate)) s to \(output)")
    }
}
