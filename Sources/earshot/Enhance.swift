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
        try OutputPath.refuseOverwriting(output, inputs: [input])
        let suppressor = try NoiseSuppressor(model: suppression.model, strengthDB: suppression.strength)
        let source = try raw.endpoints.openSource(input)
        let run = NativeRateRun(source: source, output: output, endpoints: raw.endpoints, channelCount: source.channelCount,
                                nativeRate: NoiseSuppressor.nativeRate(for: source.sampleRate))
        let latency = try run.run("Enhancing", suppressor)
        let rate = source.sampleRate, native = run.nativeRate
        if verbose {
            let milliseconds = Double(latency) / native * 1000
            var chain = "\(suppression.model) noise suppressor at \(Int(native)) Hz: \(latency) samples = \(String(format: "%.2f", milliseconds)) ms algorithmic delay"
            if native != rate { chain = "soxr \(Int(rate))→\(Int(native)) Hz → " + chain + " → soxr back to \(Int(rate)) Hz (phase-aligned)" }
            Terminal.note(chain + "; compensated in the output")
        }
        if output != "-" {
            Terminal.note("Enhanced \(input) → \(output) (\(suppression.model) suppressor, at most \(String(format: "%g", suppression.strength)) dB of reduction)")
        }
    }
}
