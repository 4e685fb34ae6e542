import ArgumentParser
import EarshotCore
import EarshotDSP
import EarshotEnhance
import EarshotHearingAid
import EarshotIO
import Foundation

/// `earshot amplify IN -o OUT --audiogram …`: a hearing aid's amplification for one listener.
struct Amplify: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Amplify a recording for a listener's hearing loss: a prescription from the audiogram, multiband compression, a maximum output.",
        discussion: """
            A mono input is heard by both ears; a stereo input is left and right. The output is \
            stereo: the left ear's fitting on the left, the right's on the right. Without a \
            calibration profile, a full-scale sine is 100 dB SPL at the input and at the ear. \
            The compressor runs at 16 or 48 kHz (other rates are resampled) with 7.9 ms of delay, \
            compensated in the output; a limiter inside that delay holds the peaks under \
            --max-output-dbspl (or just under full scale, where the playback cannot reach it), \
            and no output sample exceeds it. See \
            'earshot fit' for the gains.
            """)

    @Argument(help: "Input file, or - for raw PCM on stdin.")
    var input: String

    @Option(name: .shortAndLong, help: "Output file, or - for raw PCM on stdout.")
    var output: String

    @OptionGroup var fitting: FittingOptions

    @Flag(help: "Print the chain and its delay on stderr.")
    var verbose = false

    @OptionGroup var raw: RawStreamOptions

    func run() throws {
        try OutputPath.refuseOverwriting(output, inputs: [input])
        guard let fit = try fitting.fitting() else {
            throw EarshotError.invalidArgument("amplify needs the listener's audiogram: --audiogram FILE.json or a stored test's id")
        }
        let profile = try fitting.profile()
        let compressor = try WideDynamicRangeCompressor(try fit.compression(calibration: profile))
        let ceiling = try fit.ceilingDBFS(calibration: profile)
        if let note = try fit.unreachableOutputNote(calibration: profile, limitDBFS: ceiling) { Terminal.note("note: \(note)") }
        let source = try raw.endpoints.openSource(input)
        guard source.channelCount <= 2 else {
            throw EarshotError.invalidArgument("\(input): \(source.channelCount) channels; amplify takes mono, or stereo as left and right")
        }
        let run = NativeRateRun(source: source, output: output, endpoints: raw.endpoints, channelCount: 2,
                                nativeRate: NoiseSuppressor.nativeRate(for: source.sampleRate))
        let latency = try run.run("Amplifying", compressor, outputGuard: OutputLevelGuard(ceilingDBFS: ceiling))
        if verbose {
            let milliseconds = Double(latency) / run.nativeRate * 1000
            Terminal.note("\(fit.rule.rawValue) compressor at \(Int(run.nativeRate)) Hz (\(String(format: "%.2f", milliseconds)) ms, compensated) with a look-ahead limiter inside that delay → output guard at \(String(format: "%.1f", ceiling)) dBFS")
        }
    }
}
