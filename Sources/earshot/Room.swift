import ArgumentParser
import EarshotCore
import EarshotIO
import EarshotRoom
import Foundation

/// `earshot room …`: room acoustics for research and for art.
struct Room: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Room acoustics: iterate a room (\"I am sitting in a room\"), measure, analyse and simulate impulse responses.",
        subcommands: [RoomIterate.self, RoomSweep.self, RoomMeasure.self, RoomAnalyze.self, RoomSimulate.self])
}

/// Parses "5x4x3" and "1.5,2,1.2".
func parseTriple(_ text: String, separator: Character, name: String) throws -> (Double, Double, Double) {
    let parts = text.split(separator: separator).map { Double($0.trimmingCharacters(in: .whitespaces)) }
    guard parts.count == 3, let a = parts[0], let b = parts[1], let c = parts[2], [a, b, c].allSatisfy(\.isFinite) else {
        throw EarshotError.invalidArgument("\(name) must be three numbers like \(separator == "x" ? "5x4x3" : "1.5,2,1.2"), not '\(text)'")
    }
    return (a, b, c)
}

/// `earshot room iterate SOURCE --ir IR --generations N -o OUT`
struct RoomIterate: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "iterate",
        abstract: "Convolve a recording with a room again and again, as in Alvin Lucier's \"I am sitting in a room\".",
        discussion: """
            Generation 1 is SOURCE convolved with the impulse response; generation k is generation \
            k−1 convolved again. Every generation is computed exactly in one frequency-domain pass, \
            so 32 generations cost little more than one. A response at another sample rate is \
            resampled to the source's; mono and stereo combine as mono×stereo → stereo, \
            stereo×stereo → per channel.
            """)

    @Argument(help: "The recording to play into the room.") var source: String
    @Option(help: "The room's impulse response (mono or stereo).") var ir: String
    @Option(help: "How many times to play the recording into the room.") var generations: Int
    @Option(name: .shortAndLong, help: "The last generation's file (format from the extension).") var output: String
    @Option(help: "Also write every generation into this folder, as generation-01.EXT, …") var all: String?
    @Option(help: "peak (−1 dBFS), loudness (−23 LUFS, peak ≤ −1 dBFS) or none (the exact result).") var normalize: GenerationNormalization = .peak
    @Flag(help: "Cut each generation's tail where it has decayed 60 dB below its peak.") var trim = false
    @Option(help: "Output sample format (default: f32; s24 for FLAC).") var sampleFormat: SampleFormat?

    func run() throws {
        try OutputPath.refuseOverwriting(output, inputs: [source, ir])
        guard (1...1000).contains(generations) else {
            throw EarshotError.invalidArgument("--generations must be 1–1000, not \(generations)")
        }
        let format = try AudioFile.unboundedSampleFormat(for: output, requested: sampleFormat)
        let fileExtension = (output as NSString).pathExtension
        if let all {
            try OutputPath.makeFolder(all)
        }
        let (sourceInfo, sourceBuffer) = try AudioFile.read(path: source)
        let (irInfo, irBuffer) = try AudioFile.read(path: ir)
        let response = try Resampler.resample(irBuffer.toArrays(), from: irInfo.sampleRate, to: sourceInfo.sampleRate)
        let iteration = try IteratedConvolution(source: sourceBuffer.toArrays(), response: response)
        let rate = sourceInfo.sampleRate
        let wanted = all == nil ? Set([generations]) : Set(1...generations)
        let progress = ProgressBar(label: "Generations", total: generations)
        try iteration.run(through: generations, wanted: wanted, progress: progress.update) { k, exact in
            var channels = exact
            normalize.apply(to: &channels, sampleRate: rate)
            if trim { trimTail(&channels, sampleRate: rate) }
            if let all {
                let name = String(format: "generation-%02d.%@", k, fileExtension)
                try AudioFile.writeUnclipped(channels, to: (all as NSString).appendingPathComponent(name), sampleRate: rate, sampleFormat: format)
            }
            if k == generations { try AudioFile.writeUnclipped(channels, to: output, sampleRate: rate, sampleFormat: format) }
        }
        progress.finish()
    }
}

extension GenerationNormalization: ExpressibleByArgument {}

/// The exponential sweep both `room sweep` and `room measure` use; they must agree.
struct SweepOptions: ParsableArguments {
    @Option(help: "Sweep length in seconds.") var sweepSeconds: Double = 10
    @Option(help: "Sample rate in Hz.") var rate: Double = 48_000
    @Option(help: "Sweep start frequency in Hz.") var startHz: Double = 20
    @Option(help: "Sweep end frequency in Hz (default: 20 kHz or 0.45 × the rate, whichever is lower).") var endHz: Double?

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
    @Option(help: "Silence after the sweep, in seconds, for the room's tail.") var silenceSeconds: Double = 3
    @Option(name: .shortAndLong, help: "Output file.") var output: String

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
    @Option(help: "A recording of the sweep to deconvolve, instead of measuring live.") var recorded: String?
    @OptionGroup var inputDevice: InputDeviceOption
    @OptionGroup var outputDevice: OutputDeviceOption
    @OptionGroup var ceiling: OutputCeilingOption
    @Option(help: "Length of the impulse response in seconds.") var responseSeconds: Double = 2
    @Option(help: "Write the 2nd–5th harmonic distortion responses into this folder.") var harmonics: String?
    @Option(name: .shortAndLong, help: "The impulse response file.") var output: String

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
        let measured = try signal.measure(recording, responseSeconds: responseSeconds)
        if let harmonics {
            try OutputPath.makeFolder(harmonics)
            for (n, responses) in measured.harmonics.enumerated() {
                let path = (harmonics as NSString).appendingPathComponent("harmonic-\(n + 2).\((output as NSString).pathExtension)")
                try AudioFile.writeUnclipped(responses, to: path, sampleRate: sweep.rate, sampleFormat: format)
            }
        }
        try AudioFile.writeUnclipped(measured.linear, to: output, sampleRate: sweep.rate, sampleFormat: format)
        Terminal.note(String(format: "Wrote %.2f s impulse response to %@ (direct sound at %.1f ms, including device latency)",
                             Double(measured.linear.first?.count ?? 0) / sweep.rate, output, measured.directSoundSeconds * 1000))
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

/// `earshot room analyze IR`: ISO 3382 parameters, broadband and per octave band.
struct RoomAnalyze: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "analyze",
        abstract: "Reverberation time (T20, T30, EDT), clarity (C50, C80) and DRR of an impulse response, per octave band.")

    @Argument(help: "An impulse response file.") var ir: String
    @Option(help: OutputStyle.help) var format: OutputStyle = .text

    struct ChannelReport: Codable {
        var channel: Int
        var bands: [RoomParameters]
    }

    func run() throws {
        let (info, buffer) = try AudioFile.read(path: ir)
        let reports = try buffer.toArrays().enumerated().map { c, samples in
            ChannelReport(channel: c + 1, bands: try RoomAnalysis.analyze(samples, sampleRate: info.sampleRate))
        }
        if format.isJSON {
            try Terminal.printJSON(reports)
            return
        }
        for report in reports {
            if reports.count > 1 { print("Channel \(report.channel)") }
            print(RoomParameters.table(report.bands))
        }
    }
}

/// `earshot room simulate --size 5x4x3 --rt60 0.5 --source x,y,z --mic x,y,z -o IR`
struct RoomSimulate: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "simulate",
        abstract: "Simulate a shoebox room's impulse response with the image-source method.",
        discussion: """
            The walls' absorption is chosen so the simulated response decays with the requested \
            T30 (a specular shoebox decays more slowly than Sabine or Eyring predict; both are \
            printed for comparison). Arrivals are delayed by \(ShoeboxRoom.interpolationHalfLength) \
            samples, half the interpolation kernel.
            """)

    @Option(help: "Room dimensions in metres, WxDxH.") var size: String
    @Option(help: "Reverberation time in seconds (or give --absorption).") var rt60: Double?
    @Option(help: "Energy absorption of every wall, 0–1 (instead of --rt60).") var absorption: Double?
    @Option(help: "Source position in metres, x,y,z.") var source: String
    @Option(help: "Microphone position in metres, x,y,z.") var mic: String
    @Option(help: "Sample rate in Hz.") var rate: Double = 16_000
    @Option(help: "Keep only images with at most this many reflections (default: all within the response's length).") var maxOrder: Int?
    @Option(name: .shortAndLong, help: "The impulse response file.") var output: String
    @Option(help: "Output sample format (default: f32; s24 for FLAC).") var sampleFormat: SampleFormat?

    func run() throws {
        let (w, d, h) = try parseTriple(size, separator: "x", name: "--size")
        let (sx, sy, sz) = try parseTriple(source, separator: ",", name: "--source")
        let (mx, my, mz) = try parseTriple(mic, separator: ",", name: "--mic")
        let room: ShoeboxRoom
        switch (rt60, absorption) {
        case (let rt60?, nil): room = try ShoeboxRoom(width: w, depth: d, height: h, rt60: rt60)
        case (nil, let alpha?): room = try ShoeboxRoom(width: w, depth: d, height: h, absorption: alpha)
        default: throw EarshotError.invalidArgument("give exactly one of --rt60 and --absorption")
        }
        let format = try AudioFile.unboundedSampleFormat(for: output, requested: sampleFormat)
        let response = try room.impulseResponse(
            source: RoomPoint(sx, sy, sz), microphone: RoomPoint(mx, my, mz), sampleRate: rate, maxOrder: maxOrder)
        try AudioFile.writeUnclipped([response], to: output, sampleRate: rate, sampleFormat: format)
        let measured = try RoomAnalysis.analyze(response, sampleRate: rate)[0]
        Terminal.note(String(
            format: "Wall absorption %.4f; T30 measured %@ s (image-source prediction %.3f s, Sabine %.3f s, Eyring %.3f s); %.2f s written to %@",
            room.absorption, measured.t30.map { String(format: "%.3f", $0) } ?? "–", room.predictedT30(absorption: room.absorption),
            room.sabineRT60, room.eyringRT60, Double(response.count) / rate, output))
    }
}
