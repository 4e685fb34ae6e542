import ArgumentParser
import EarshotCore
import EarshotEnhance
import EarshotIO
import Foundation

/// `earshot enhance IN -o OUT`: noise reduction for clearer speech.
struct Enhance: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Reduce background noise in speech, at hearing-aid delay (under 10 ms).",
        discussion: """
            Each channel is processed on its own. The suppressor runs at 16 or 48 kHz; other rates \
            are resampled on the way in and back on the way out. The background is learned from the \
            start ("noise training") and tracked throughout. For files and \
            pipes the delay is compensated, so output lines up with input.
            """)

    @Argument(help: "Input file, or - for raw PCM on stdin.")
    var input: String

    @Option(name: .shortAndLong, help: "Output file, or - for raw PCM on stdout.")
    var output: String

    @OptionGroup var suppression: SuppressorOptions

    @Flag(help: "Print the processing chain and its delay on stderr.")
    var verbose = false

    @OptionGroup var raw: RawStreamOptions

    func run() throws {
        let suppressor = try NoiseSuppressor(model: suppression.model, strengthDB: suppression.strength)
        let source = try raw.openSource(input)
        let rate = source.sampleRate, native = NoiseSuppressor.nativeRate(for: rate)
        let inputFormat = (source as? AudioFileReader)?.info.sampleFormat
        let fileSink = try raw.openSink(output, sampleRate: rate, channelCount: source.channelCount, sampleFormat: nil, inputSampleFormat: inputFormat)
        let processed: AudioSource = native == rate ? source : try ResampledSource(source, sampleRate: native)
        let sink: AudioSink = native == rate ? fileSink : try ResampledSink(fileSink, from: native, to: rate, channelCount: source.channelCount)
        let total = (source as? AudioFileReader)?.info.frameCount ?? 0
        let progress = ProgressBar(label: "Enhancing", total: total)
        let report = try Runner(blockFrames: 1024, progress: { _ in
            if let reader = source as? AudioFileReader { progress.update(reader.framesRead) }
        }).run(source: processed, chain: suppressor, sink: sink)
        reportClipping(sink)
        progress.finish()
        if verbose {
            let milliseconds = Double(report.latencySamples) / native * 1000
            var chain = "\(suppression.model) noise suppressor at \(Int(native)) Hz: \(report.latencySamples) samples = \(String(format: "%.2f", milliseconds)) ms algorithmic delay"
            if native != rate { chain = "soxr \(Int(rate))→\(Int(native)) Hz → " + chain + " → soxr back to \(Int(rate)) Hz (phase-aligned)" }
            Terminal.note(chain + "; compensated in the output")
        }
    }
}
