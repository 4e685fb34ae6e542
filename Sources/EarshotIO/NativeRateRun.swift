import EarshotCore
import EarshotDSP

/// A file or raw stream through a chain that runs at a native rate of its own (the low-delay
/// STFT's 16 or 48 kHz): resampled with soxr on the way in and back on the way out, the delay
/// compensated. The output keeps the input's rate and sample format, with `channelCount`
/// channels (mono is copied to each).
public struct NativeRateRun {
    public let source: AudioSource
    public let output: String
    public let endpoints: AudioEndpoints
    public let channelCount: Int
    /// The rate the chain runs at.
    public let nativeRate: Double

    public init(source: AudioSource, output: String, endpoints: AudioEndpoints, channelCount: Int, nativeRate: Double) {
        self.source = source
        self.output = output
        self.endpoints = endpoints
        self.channelCount = channelCount
        self.nativeRate = nativeRate
    }

    /// Runs `chain`; `outputGuard` (no delay) works on what is written, after the resampling, so
    /// no written sample can overshoot it. `progress` hears the input frames read so far. Returns
    /// the chain's delay in samples at `nativeRate` and the sink written (to ask what it clipped).
    @discardableResult
    public func run(_ chain: some AudioProcessor, outputGuard: OutputLevelGuard? = nil, progress: ((Int) -> Void)? = nil) throws -> (latencySamples: Int, sink: AudioSink) {
        let rate = source.sampleRate, native = nativeRate
        let mapped: AudioSource = channelCount == source.channelCount ? source : try ChannelMappedSource(source, channelCount: channelCount)
        let reader = source as? AudioFileReader
        let fileSink = try endpoints.openSink(output, sampleRate: rate, channelCount: channelCount, sampleFormat: nil, inputSampleFormat: reader?.info.sampleFormat)
        let written: AudioSink = try outputGuard.map { try GuardedSink(fileSink, guard: $0, sampleRate: rate, channelCount: channelCount) } ?? fileSink
        let processed: AudioSource = native == rate ? mapped : try ResampledSource(mapped, sampleRate: native)
        let sink: AudioSink = native == rate ? written : try ResampledSink(written, from: native, to: rate, channelCount: channelCount)
        let report = try Runner(blockFrames: 1024, progress: { _ in
            if let reader { progress?(reader.framesRead) }
        }).run(source: processed, chain: chain, sink: sink)
        return (report.latencySamples, sink)
    }
}

extension AudioSink {
    /// The file writer at the end of this sink's chain of wrappers, if it ends in a file.
    public var fileWriter: AudioFileWriter? {
        var sink: AudioSink? = self
        while let current = sink {
            if let writer = current as? AudioFileWriter { return writer }
            sink = (current as? ResampledSink)?.downstream ?? (current as? GuardedSink)?.downstream ?? (current as? FirstChannelSink)?.downstream
        }
        return nil
    }
}
