import EarshotCore
import EarshotDSP
import EarshotEnhance
import EarshotIO

/// A file or raw stream through a chain that runs at the native rate of Earshot's low-delay
/// STFT (16 or 48 kHz): resampled with soxr on the way in and back on the way out, the delay
/// compensated, a progress bar on a terminal. The output keeps the input's rate and sample
/// format, with `channelCount` channels (mono is copied to each).
struct NativeRateRun {
    let source: AudioSource
    let output: String
    let raw: RawStreamOptions
    let channelCount: Int
    let label: String

    /// The rate the chain ran at.
    var nativeRate: Double { NoiseSuppressor.nativeRate(for: source.sampleRate) }

    /// Runs `chain`; `outputGuard` (no delay) works on what is written, after the resampling,
    /// so no written sample can overshoot it. Returns the chain's delay in samples at `nativeRate`.
    @discardableResult
    func run(_ chain: some AudioProcessor, outputGuard: OutputLevelGuard? = nil) throws -> Int {
        let rate = source.sampleRate, native = nativeRate
        let mapped: AudioSource = channelCount == source.channelCount ? source : try ChannelMappedSource(source, channelCount: channelCount)
        let reader = source as? AudioFileReader
        let fileSink = try raw.openSink(output, sampleRate: rate, channelCount: channelCount, sampleFormat: nil, inputSampleFormat: reader?.info.sampleFormat)
        let written: AudioSink = try outputGuard.map { try GuardedSink(fileSink, guard: $0, sampleRate: rate, channelCount: channelCount) } ?? fileSink
        let processed: AudioSource = native == rate ? mapped : try ResampledSource(mapped, sampleRate: native)
        let sink: AudioSink = native == rate ? written : try ResampledSink(written, from: native, to: rate, channelCount: channelCount)
        let progress = ProgressBar(label: label, total: reader?.info.frameCount ?? 0)
        let report = try Runner(blockFrames: 1024, progress: { _ in
            if let reader { progress.update(reader.framesRead) }
        }).run(source: processed, chain: chain, sink: sink)
        reportClipping(sink)
        progress.finish()
        return report.latencySamples
    }
}
