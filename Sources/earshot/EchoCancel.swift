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
            SpeexDSP's adaptive filter (MDF) models the echo path over --tail seconds — a \
            loudspeaker up to 300 ms late and the room — and Earshot's residual echo suppressor \
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
        let (micInfo, micBuffer) = try AudioFile.read(path: mic)
        let (farInfo, farBuffer) = try AudioFile.read(path: far)
        guard micInfo.frameCount > 0 else { throw EarshotError.emptyAudio(path: mic) }
        guard farInfo.frameCount > 0 else { throw EarshotError.emptyAudio(path: far) }
        let rate = micInfo.sampleRate
        guard (8_000...48_000).contains(rate) else {
            throw EarshotError.invalidArgument("echo cancellation runs at 8 to 48 kHz; convert \(mic) first (it is \(Int(rate)) Hz)")
        }
        let micSignal = Self.mono(micBuffer.toArrays(frameCount: micInfo.frameCount))
        var farSignal = Self.mono(farBuffer.toArrays(frameCount: farInfo.frameCount))
        if farInfo.sampleRate != rate {
            farSignal = try Resampler.resample([farSignal], from: farInfo.sampleRate, to: rate)[0]
        }
        // The far end as long as the microphone: silence after it ends.
        farSignal = Array(farSignal.prefix(micSignal.count)) + [Float](repeating: 0, count: max(0, micSignal.count - farSignal.count))

        // Where the loudspeaker's delay can be read off the recording, the far end is moved up
        // to just before its earliest arrival, so the filter spends its length on the room.
        let delays = EchoDelay.estimate(mic: micSignal, far: farSignal, sampleRate: rate)
        var filterTail = tail
        if let earliest = delays.min(), let latest = delays.max() {
            let lead = max(0, earliest - Self.guardSeconds)
            filterTail = min(tail, max(Self.shortestTail, latest - lead + Self.roomSeconds))
            let shift = Int(lead * rate)
            farSignal = [Float](repeating: 0, count: shift) + farSignal.prefix(farSignal.count - shift)
        }
        let canceller = EchoCanceller(tailSeconds: filterTail, floorDB: suppressionFloor)
        let source = MemorySource(channels: [micSignal, farSignal], sampleRate: rate)
        let sink = MemorySink(channelCount: 2)
        _ = try Runner(blockFrames: 1024, compensateLatency: true).run(source: source, chain: canceller, sink: sink)
        let cleaned = Array(sink.channels[0].prefix(micSignal.count))
        try AudioFile.write(AudioBuffer(channels: [cleaned]), to: output, sampleRate: rate, sampleFormat: micInfo.sampleFormat)
    }

    /// Room left in the filter before the earliest arrival, and after the latest.
    static let guardSeconds = 0.02
    static let roomSeconds = 0.25
    static let shortestTail = 0.2

    static func mono(_ channels: [[Float]]) -> [Float] {
        guard channels.count > 1 else { return channels[0] }
        let scale = 1 / Float(channels.count)
        return channels[0].indices.map { i in channels.reduce(0) { $0 + $1[i] } * scale }
    }
}
