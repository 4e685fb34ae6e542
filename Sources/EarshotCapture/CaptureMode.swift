import EarshotCore

/// How a microphone is captured, as phones offer it.
public enum CaptureMode: String, SnakeCaseValue, Sendable {
    public init?(rawValue: String) {
        guard let value = Self.named(rawValue) else { return nil }
        self = value
    }

    /// Nothing done: the microphone as it is.
    case raw
    /// Light voice processing: rumble filtered out, gentle noise suppression, automatic gain.
    case standard
    /// Only the voice: echo cancelled, strong noise suppression (alert sounds still pass), automatic gain.
    case voiceIsolation = "voice_isolation"
    /// The room as it sounds: no suppression, full bandwidth, only gentle level control.
    case wideSpectrum = "wide_spectrum"
}

/// Runs a one-channel processor on channel 0 of wider blocks and leaves the other channels be:
/// a capture chain carries the far end beside the microphone for the echo canceller, and
/// everything after it works on the microphone alone. The latency reported is channel 0's; the
/// others pass through as they are (nothing downstream reads them).
public final class FirstChannel: AudioProcessor {
    public let inner: any AudioProcessor

    public init(_ inner: any AudioProcessor) { self.inner = inner }

    public var latencySamples: Int { inner.latencySamples }

    public func prepare(_ spec: ProcessSpec) throws {
        try inner.prepare(ProcessSpec(sampleRate: spec.sampleRate, maximumBlockFrames: spec.maximumBlockFrames, channelCount: 1))
    }

    public func reset() { inner.reset() }

    public func process(_ block: inout AudioBlock) {
        var first = AudioBlock(base: block.channel(0).baseAddress!, channelCount: 1, frameCount: block.frameCount, channelStride: block.frameCount)
        inner.process(&first)
    }
}
