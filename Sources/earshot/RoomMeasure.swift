import ArgumentParser
import EarshotCore
import EarshotDSP
import EarshotIO
import EarshotRoom
import Foundation

/// The exponential sweep both `room sweep` and `room measure` use; they must agree.
struct SweepOptions: ParsableArguments {
    @Option(help: "Sweep length in seconds.")
    var sweepSeconds: Double = 10

    @Option(help: "Sample rate in Hz.")
    var rate: Double = 48_000

    @Option(help: "Sweep start frequency in Hz.")
    var startHz: Double = 20

    @Option(help: "Sweep end frequency in Hz (default: 20 kHz or 0.45 × the rate, whichever is lower).")
    var endHz: Double?

    func makeSweep() throws -> ExponentialSweep {
        try ExponentialSweep(startHz: startHz, endHz: endHz, durationSeconds: sweepSeconds, sampleRate: rate)
    }
}

/// `earshot room sweep -o FILE`: the measurement signal, to play from another system.
struct RoomSweep: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sweep",
        abstract: "Write the exponential sine sweep used to measure impulse responses (−6 dBFS).",
        discussion: "Play it in the room, record it, then run 'earshot room measure --recorded' with the same sweep options.")

    @OptionGroup var sweep: SweepOptions

    @Option(help: "Silence after the sweep, in seconds, for the room's tail.")
    var silenceSeconds: Double = 3

    @Option(name: .shortAndLong, help: "Output file.")
    var output: String

    func run() throws {
        guard silenceSeconds.isFinite, (0...60).contains(silenceSeconds) else {
            throw EarshotError.invalidArgument("--silence-seconds must be 0–60")
        }
        let signal = try sweep.makeSweep().signal + [Float](repeating: 0, count: Int(silenceSeconds * sweep.rate))
        try AudioFile.writeUnclipped([signal], to: output, sampleRate: sweep.rate, sampleFormat: AudioFile.unboundedSampleFormat(for: output, requested: nil))
    }
}

/// `earshot room measure -o IR`: play the sweep and record it (or take a recording of it),
/// then deconvolve the impulse response.
struct RoomMeasure: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "measure",
        abstract: "Measure an impulse response with an exponential sine sweep, live or from a recording.",
        discussion: """
            Live: the sweep plays on the output device while the input device records. Offline \
            (--recorded): the file must be a recording of 'earshot room sweep' with the same \
            options. Harmonic distortion lands in separate responses (--harmonics DIR).
            """)

    @OptionGroup var sweep: SweepOptions

    @Option(help: "A recording of the sweep to deconvolve, instead of measuring live.")
    var recorded: String?

    @OptionGroup var inputDevice: InputDeviceOption
    @OptionGroup var outputDevice: OutputDeviceOption
    @OptionGroup var ceiling: OutputCeilingOption

    @Option(help: "Length of the impulse response in seconds.")
    var responseSeconds: Double = 2

    @Option(help: "Write the 2nd–5th harmonic distortion responses into this folder.")
    var harmonics: String?

    @Option(name: .shortAndLong, help: "The impulse response file.")
    var output: String

    func run() throws {
        guard responseSeconds.isFinite, responseSeconds > 0, responseSeconds <= 60 else {
            throw EarshotError.invalidArgument("--response-seconds must be between 0 and 60")
        }
        try OutputPath.refuseOverwriting(output, inputs: [recorded])
        let signal = try sweep.makeSweep()
        let format = try AudioFile.unboundedSampleFormat(for: output, requested: nil)
        let recording: [[Float]]
        if let recorded {
            let (info, buffer) = try AudioFile.read(path: recorded)
            recording = try Resampler.resample(buffer.toArrays(), from: info.sampleRate, to: sweep.rate)
        } else {
            recording = [try recordLive(signal)]
        }
        var responses = try recording.map { try signal.deconvolve($0, responseSeconds: responseSeconds) }
        if let harmonics {
            try OutputPath.makeFolder(harmonics)
            let ext = (output as NSString).pathExtension
            for n in 0..<(responses.first?.harmonics.count ?? 0) {
                let path = (harmonics as NSString).appendingPathComponent("harmonic-\(n + 2).\(ext)")
                let length = responses.map { $0.harmonics[n].count }.min() ?? 0
                try AudioFile.writeUnclipped(responses.map { Array($0.harmonics[n].prefix(length)) }, to: path, sampleRate: sweep.rate, sampleFormat: format)
            }
        }
        let length = responses.map(\.linear.count).min() ?? 0
        for c in responses.indices { responses[c].linear = Array(responses[c].linear.prefix(length)) }
        try AudioFile.writeUnclipped(responses.map(\.linear), to: output, sampleRate: sweep.rate, sampleFormat: format)
        let onset = (responses.first?.linear).map { h in h.firstIndex { abs($0) >= 0.1 * (h.map { abs($0) }.max() ?? 0) } ?? 0 } ?? 0
        Terminal.note(String(format: "Wrote %.2f s impulse response to %@ (direct sound at %.1f ms, including device latency)",
                             Double(length) / sweep.rate, output, Double(onset) / sweep.rate * 1000))
    }

    /// Plays the sweep (then silence for the tail) and records the same span.
    private func recordLive(_ sweep: ExponentialSweep) throws -> [Float] {
        // The sweep plays at -6 dBFS; a lower ceiling would bend it and spoil the measurement.
        guard ceiling.maxOutputDbfs >= ExponentialSweep.levelDBFS else {
            throw EarshotError.invalidArgument(String(format: "the sweep plays at %.0f dBFS, above --max-output-dbfs %.1f: turn the amplifier down instead",
                                                      ExponentialSweep.levelDBFS, ceiling.maxOutputDbfs))
        }
        let played = sweep.signal + [Float](repeating: 0, count: Int((responseSeconds + 0.5) * sweep.sampleRate))
        let input = try inputDevice.find(), output = try outputDevice.find()
        installInterruptHandler()
        return try PlayAndRecord.run(played, sampleRate: sweep.sampleRate, from: input, to: output, ceiling: ceiling.guardStage, stop: interruptRequested)
    }
}
