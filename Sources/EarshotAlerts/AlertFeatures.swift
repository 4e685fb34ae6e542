import EarshotCore
import EarshotDSP
import Foundation

/// The alert detector's features, computed as a stream arrives (the definition is
/// `training/features.py`; a parity test holds the two together).
///
/// 16 kHz input; 1024-sample periodic-Hann frames every 320 samples (64 ms every 20 ms), the
/// stream preceded by silence. Per frame and per mel band (64 Slaney bands, 50 Hz–8 kHz):
/// the log-mel energy, and the band's tonality — its strongest bin over its weighted mean, in
/// log10 — which sets a siren, a piezo tone or a chime apart from noise and most speech.
/// The network sees the last `windowFrames` frames (as many as it was trained on): log-mel, each
/// band less its mean over the window (so neither input level nor microphone colour matters),
/// and tonality as is.
public struct AlertFeatures {
    public static let sampleRate = 16_000.0
    public static let frameSize = 1024
    public static let hop = 320
    public static let melCount = 64
    /// Frames a network input holds unless the model says otherwise: 1 s.
    public static let defaultWindowFrames = 50
    public let windowFrames: Int
    static let floor: Float = 1e-10

    private var analyzer: STFTAnalyzer
    private let filterbank: MelFilterbank
    private let weightSums: [Float]
    private var power: [Float]
    private var mel: [Float]
    /// The last `windowFrames` frames, oldest first once full: [frame][channel][band].
    private var history: [Float]
    private var newest = -1
    /// Frames computed since the start.
    public private(set) var frameCount = 0
    /// Samples of the next frame already fed.
    private var pendingSamples = 0

    public init(windowFrames: Int = Self.defaultWindowFrames) {
        precondition(windowFrames >= 1)
        self.windowFrames = windowFrames
        analyzer = STFTAnalyzer(configuration: STFTConfiguration(frameSize: Self.frameSize, hop: Self.hop, analysis: .hann))
        let bank = MelFilterbank(sampleRate: Self.sampleRate, fftSize: Self.frameSize, melCount: Self.melCount, minimumHz: 50, maximumHz: 8_000)
        filterbank = bank
        weightSums = (0..<Self.melCount).map { m in
            bank.supports[m].reduce(Float(0)) { $0 + bank.weights[m * bank.binCount + $1] }
        }
        power = [Float](repeating: 0, count: Self.frameSize / 2 + 1)
        mel = [Float](repeating: 0, count: Self.melCount)
        history = [Float](repeating: 0, count: windowFrames * 2 * Self.melCount)
    }

    /// Values per network input: 2 × windowFrames × melCount.
    public var inputCount: Int { 2 * windowFrames * Self.melCount }

    /// Feeds 16 kHz samples; `onFrame` runs after each new frame (with the frame count so far).
    public mutating func push(_ samples: UnsafeBufferPointer<Float>, onFrame: (inout AlertFeatures) -> Void) {
        var start = 0
        while start < samples.count {
            // One frame at a time, so `onFrame` can read the window right after its frame.
            let needed = Self.hop - pendingSamples
            let count = min(needed, samples.count - start)
            var completed = false
            analyzer.analyze(UnsafeBufferPointer(rebasing: samples[start..<(start + count)])) { _ in completed = true }
            // At most one frame per call: the transform still holds its spectrum.
            if completed { record(analyzer.fft) }
            pendingSamples = completed ? 0 : pendingSamples + count
            start += count
            if completed { onFrame(&self) }
        }
    }

    private mutating func record(_ fft: RealFFT) {
        let bins = fft.binCount
        for k in 0..<bins { power[k] = fft.power(bin: k) }
        power.withUnsafeBufferPointer { p in
            mel.withUnsafeMutableBufferPointer { filterbank.apply(power: p, into: $0) }
        }
        newest = (newest + 1) % windowFrames
        frameCount += 1
        let row = newest * 2 * Self.melCount
        for m in 0..<Self.melCount {
            var peak: Float = 0
            for k in filterbank.supports[m] { peak = max(peak, power[k]) }
            history[row + m] = log10f(mel[m] + Self.floor)
            history[row + Self.melCount + m] = log10f((peak + Self.floor) / (mel[m] / weightSums[m] + Self.floor))
        }
    }

    /// The latest frame's log-mel (first `melCount`) and tonality (next `melCount`).
    public func latestFrame(into output: UnsafeMutableBufferPointer<Float>) {
        let row = newest * 2 * Self.melCount
        for i in 0..<(2 * Self.melCount) { output[i] = history[row + i] }
    }

    /// The network input for the window ending at the latest frame: [channel][frame][band],
    /// frames before the stream began counted as silence.
    public func window(into output: UnsafeMutablePointer<Float>) {
        let frames = windowFrames, bands = Self.melCount
        let silence = log10f(Self.floor)
        for m in 0..<bands {
            var sum: Float = 0
            for t in 0..<frames {
                let age = frames - 1 - t
                let value = age < frameCount ? history[((newest - age + frames) % frames) * 2 * bands + m] : silence
                output[t * bands + m] = value
                sum += value
            }
            // Each band less its mean over the window, as the network was trained.
            let mean = sum / Float(frames)
            for t in 0..<frames { output[t * bands + m] -= mean }
        }
        for t in 0..<frames {
            let age = frames - 1 - t
            for m in 0..<bands {
                let value: Float = age < frameCount ? history[((newest - age + frames) % frames) * 2 * bands + bands + m] : 0
                output[(frames + t) * bands + m] = value
            }
        }
    }

    public mutating func reset() {
        analyzer.reset()
        newest = -1
        frameCount = 0
        pendingSamples = 0
        for i in history.indices { history[i] = 0 }
    }
}
