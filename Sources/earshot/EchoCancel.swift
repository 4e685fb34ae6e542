import ArgumentParser
import EarshotCapture
import EarshotCore
import EarshotIO
import Foundation

/// `earshot aec --mic MIC --far FAR -o OUT`: take what a loudspeaker played out of a microphone recording.
struct EchoCancel: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "aec",
        abstract: "Echo cancellation: remove the far end (what the loudspeaker played) from the microphone recording.",
        discussion: """
            A frequency-domain Kalman filter models the echo path over --tail seconds — a \
            loudspeaker up to 300 ms late and the room — and a residual echo suppressor \
            lowers what it leaves. Both files are mixed to mono; the far end is resampled to the \
            microphone's rate if they differ (8 to 48 kHz). The output lines up with the microphone.
            """)

    @Option(help: "The microphone recording.")
    var mic: String

    @Option(help: "The far end: what the loudspeaker played, from its start.")
    var far: String

    @Option(name: .shortAndLong, help: "Output file.")
    var output: String

    @Option(help: "Longest echo path modelled, in seconds (delay plus room tail).")
    var tail: Double = 0.5

    @Option(help: "Deepest residual echo suppression, in dB (negative; 0 turns it off).")
    var suppressionFloor: Double = -40

    func validate() throws {
        guard tail.isFinite, tail >= 0.05, tail <= 2 else { throw ValidationError("--tail must be between 0.05 and 2 s, not \(tail)") }
        guard suppressionFloor.isFinite, suppressionFloor <= 0, suppressionFloor >= -80 else {
            throw ValidationError("--suppression-floor must be between -80 and 0 dB, not \(suppressionFloor)")
        }
    }

    func run() throws {
        try OutputPath.refuseOverwriting(output, inputs: [mic, far])
        let recording = try MonoRecording(path: mic)
        let rate = recording.info.sampleRate
        guard (8_000...48_000).contains(rate) else {
            throw EarshotError.invalidArgument("echo cancellation runs at 8 to 48 kHz; convert \(mic) first (it is \(Int(rate)) Hz)")
        }
        let (farSignal, filterTail) = try recording.farEnd(far, longestTailSeconds: tail)
        let canceller = EchoCanceller(tailSeconds: filterTail, floorDB: suppressionFloor)
        let source = MemorySource(channels: [recording.samples, farSignal], sampleRate: rate)
        let sink = MemorySink(channelCount: 2)
        _ = try Runner(blockFrames: 1024, compensateLatency: true).run(source: source, chain: canceller, sink: sink)
        let cleaned = Array(sink.channels[0].prefix(recording.samples.count))
        try AudioFile.write(AudioBuffer(channels: [cleaned]), to: output, sampleRate: rate, sampleFormat: recording.info.sampleFormat)
    }
}
