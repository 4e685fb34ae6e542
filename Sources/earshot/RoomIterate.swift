import ArgumentParser
import EarshotCore
import EarshotIO
import EarshotRoom
import Foundation

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

    @Argument(help: "The recording to play into the room.")
    var source: String

    @Option(help: "The room's impulse response (mono or stereo).")
    var ir: String

    @Option(help: "How many times to play the recording into the room.")
    var generations: Int

    @Option(name: .shortAndLong, help: "The last generation's file (format from the extension).")
    var output: String

    @Option(help: "Also write every generation into this folder, as generation-01.EXT, …")
    var all: String?

    @Option(help: "peak (−1 dBFS), loudness (−23 LUFS, peak ≤ −1 dBFS) or none (the exact result).")
    var normalize: GenerationNormalization = .peak

    @Flag(help: "Cut each generation's tail where it has decayed 60 dB below its peak.")
    var trim = false

    @Option(help: "Output sample format (default: f32; s24 for FLAC).")
    var sampleFormat: SampleFormat?

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
