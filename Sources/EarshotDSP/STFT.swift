import EarshotCore
import Foundation

/// How a stream is cut into spectra and put back together.
public struct STFTConfiguration: Equatable, Sendable {
    public var frameSize: Int
    public var hop: Int
    public var analysisWindow: [Float]
    public var synthesisWindow: [Float]

    /// The synthesis window defaults to the analysis window (weighted overlap-add).
    public init(frameSize: Int, hop: Int, analysis: Window = .sqrtHann, synthesis: Window? = nil) {
        self.init(
            frameSize: frameSize, hop: hop,
            analysisWindow: analysis.coefficients(count: frameSize),
            synthesisWindow: (synthesis ?? analysis).coefficients(count: frameSize))
    }

    public init(frameSize: Int, hop: Int, analysisWindow: [Float], synthesisWindow: [Float]) {
        self.frameSize = frameSize
        self.hop = hop
        self.analysisWindow = analysisWindow
        self.synthesisWindow = synthesisWindow
    }

    /// A low-delay pair (after Mauler & Martin): a long asymmetric analysis window for fine
    /// frequency resolution, and a synthesis window only `synthesisLength` samples long at the
    /// end of the frame, so the delay is set by the short window, not the frame.
    ///
    /// The analysis window rises as a square-root Hann over all but the last
    /// `synthesisLength / 2` samples and falls as one over those; the synthesis window is a Hann
    /// of `synthesisLength` divided by the analysis window, so their product is that Hann, which
    /// overlap-adds to one at a hop of `synthesisLength / 2`.
    public static func lowDelay(frameSize: Int, hop: Int) -> STFTConfiguration {
        let synthesisLength = 2 * hop
        let rise = frameSize - hop, fall = hop
        let analysis = (0..<frameSize).map { n -> Float in
            n < rise ? Float(sin(Double.pi * Double(n) / Double(2 * rise))) : Float(cos(Double.pi * Double(n - rise) / Double(2 * fall)))
        }
        let synthesis = (0..<frameSize).map { n -> Float in
            guard n >= frameSize - synthesisLength else { return 0 }
            let hann = 0.5 - 0.5 * cos(2 * Double.pi * Double(n - (frameSize - synthesisLength)) / Double(synthesisLength))
            return analysis[n] > 0 ? Float(hann / Double(analysis[n])) : 0
        }
        return STFTConfiguration(frameSize: frameSize, hop: hop, analysisWindow: analysis, synthesisWindow: synthesis)
    }

    /// Where synthesis begins in a frame: the synthesis window's first non-zero sample. Output
    /// before it gets nothing from this frame, so it is complete one frame early; the delay is
    /// therefore `frameSize − 1 − synthesisStart`.
    public var synthesisStart: Int { synthesisWindow.firstIndex { $0 != 0 } ?? 0 }

    /// Per-sample gains that undo the overlap-added window product, for the `hop` positions
    /// emitted from `synthesisStart` on. Dividing by the actual sum (rather than assuming a
    /// constant) reconstructs perfectly for any window/hop pair whose overlap never sums to zero.
    func reconstructionGains() throws -> [Float] {
        guard frameSize >= 1, hop >= 1, hop <= frameSize,
            analysisWindow.count == frameSize, synthesisWindow.count == frameSize
        else {
            throw DSPError.frame(size: frameSize, hop: hop)
        }
        guard synthesisStart + hop <= frameSize else {
            throw DSPError.synthesisWindowShorterThanHop(hop: hop)
        }
        var sums = [Double](repeating: 0, count: hop)
        for n in 0..<frameSize { sums[n % hop] += Double(analysisWindow[n]) * Double(synthesisWindow[n]) }
        let largest = sums.max() ?? 0
        guard largest > 0, sums.allSatisfy({ $0 > 1e-6 * largest }) else {
            throw DSPError.windowsOverlapToZero(frame: frameSize, hop: hop)
        }
        return (0..<hop).map { Float(1 / sums[(synthesisStart + $0) % hop]) }
    }
}

/// Keeps the latest `frameSize` samples of a stream and says when `hop` new ones have arrived.
/// Starts as if preceded by silence, so the first frame is ready after `hop` samples.
struct FrameCollector {
    let frameSize: Int
    let hop: Int
    private(set) var history: [Float]
    private var pending = 0

    init(frameSize: Int, hop: Int) {
        self.frameSize = frameSize
        self.hop = hop
        history = [Float](repeating: 0, count: frameSize)
    }

    /// Appends one sample; true when a new frame is complete.
    @inline(__always)
    mutating func push(_ sample: Float) -> Bool {
        history[frameSize - hop + pending] = sample
        pending += 1
        return pending == hop
    }

    /// Call after each complete frame has been used: drops the oldest `hop` samples.
    mutating func advance() {
        history.withUnsafeMutableBufferPointer { h in
            let base = h.baseAddress!
            base.update(from: base + hop, count: frameSize - hop)
        }
        pending = 0
    }

    mutating func reset() {
        for i in history.indices { history[i] = 0 }
        pending = 0
    }
}

/// Something that works on the spectrum of each frame, channel by channel.
public protocol SpectralStage {
    /// Called from `SpectralProcessor.prepare`; allocate here.
    mutating func prepare(binCount: Int, spec: ProcessSpec) throws
    /// Modifies `spectrum` (interleaved re, im; `binCount` bins) of one frame of `channel`.
    /// Real-time path: no allocation, lock or I/O.
    mutating func process(spectrum: UnsafeMutableBufferPointer<Float>, channel: Int)
    mutating func reset()
}

/// Streaming STFT → spectral stage → ISTFT, sample-exact for any block size.
///
/// Each output sample leaves as soon as no later frame can add to it: the algorithmic delay is
/// `frameSize − 1 − synthesisStart` samples (`frameSize − 1` for a full-length synthesis
/// window, about twice the hop for `STFTConfiguration.lowDelay`).
public final class SpectralProcessor<Stage: SpectralStage>: AudioProcessor {
    public let configuration: STFTConfiguration
    /// The stage; settable so its owner can pass it what it needs between blocks.
    public var stage: Stage
    private var channels: [ChannelState] = []
    private var fft: RealFFT?
    private var gains: [Float] = []
    /// The output's peak limit, dBFS; nil for none.
    public let limitDBFS: Double?

    /// One channel's streaming state; a class so the audio path mutates it in place, never
    /// through a copy.
    private final class ChannelState {
        var collector: FrameCollector
        let overlapAdd: UnsafeMutableBufferPointer<Float>
        let output: UnsafeMutableBufferPointer<Float>
        var outputIndex = 1  // the first hop - 1 outputs are the silence before the first frame
        let limiter: HopLimiter?
        /// What is known of the hop after `output` when a frame is synthesised, for the limiter.
        let ahead: UnsafeMutableBufferPointer<Float>
        /// Where the limiter splits the output in two (its first upper bin), with the upper
        /// band's own overlap-add, hop and look-ahead; nil for one band.
        let splitBin: Int?
        let upperOverlapAdd: UnsafeMutableBufferPointer<Float>
        let upper: UnsafeMutableBufferPointer<Float>
        let upperAhead: UnsafeMutableBufferPointer<Float>

        init(frameSize: Int, hop: Int, limiter: HopLimiter?, splitBin: Int?) {
            collector = FrameCollector(frameSize: frameSize, hop: hop)
            overlapAdd = .allocate(capacity: frameSize)
            output = .allocate(capacity: hop)
            ahead = .allocate(capacity: hop)
            self.limiter = limiter
            self.splitBin = limiter == nil ? nil : splitBin
            let split = self.splitBin != nil
            upperOverlapAdd = .allocate(capacity: split ? frameSize : 0)
            upper = .allocate(capacity: split ? hop : 0)
            upperAhead = .allocate(capacity: split ? hop : 0)
            reset()
        }

        deinit {
            overlapAdd.deallocate()
            output.deallocate()
            ahead.deallocate()
            upperOverlapAdd.deallocate()
            upper.deallocate()
            upperAhead.deallocate()
        }

        func reset() {
            collector.reset()
            overlapAdd.update(repeating: 0)
            output.update(repeating: 0)
            ahead.update(repeating: 0)
            upperOverlapAdd.update(repeating: 0)
            upper.update(repeating: 0)
            upperAhead.update(repeating: 0)
            limiter?.reset()
            outputIndex = 1
        }
    }

    /// Where each channel's limiter splits its output, Hz (channel c uses the entry
    /// `min(c, count − 1)`; nil, or none given, for one band).
    public let limiterSplitHz: [Double?]
    /// The spectrum as the stage left it, while one band at a time is synthesised.
    private var spectrumCopy: [Float] = []

    /// - Parameters:
    ///   - limitDBFS: hold every channel's output under this peak level with a `HopLimiter`,
    ///     which looks ahead inside the STFT's own delay; nil for none.
    ///   - limiterSplitHz: per channel, where the limiter splits the output to take what it
    ///     must from the upper band first.
    public init(configuration: STFTConfiguration, stage: Stage, limitDBFS: Double? = nil, limiterSplitHz: [Double?] = []) {
        self.configuration = configuration
        self.stage = stage
        self.limitDBFS = limitDBFS
        self.limiterSplitHz = limiterSplitHz
    }

    public var latencySamples: Int { configuration.frameSize - 1 - configuration.synthesisStart }

    public func prepare(_ spec: ProcessSpec) throws {
        gains = try configuration.reconstructionGains()
        let transform = RealFFT(size: configuration.frameSize)
        fft = transform
        try stage.prepare(binCount: transform.binCount, spec: spec)
        let binHz = spec.sampleRate / Double(configuration.frameSize)
        channels = (0..<spec.channelCount).map { [configuration, limitDBFS, limiterSplitHz] c in
            let split = limiterSplitHz.isEmpty ? nil : limiterSplitHz[min(c, limiterSplitHz.count - 1)]
            return ChannelState(
                frameSize: configuration.frameSize, hop: configuration.hop,
                limiter: limitDBFS.map { HopLimiter(ceilingDBFS: $0, hop: configuration.hop, sampleRate: spec.sampleRate) },
                splitBin: split.map { min(transform.binCount - 1, max(1, Int(($0 / binHz).rounded()))) })
        }
        spectrumCopy = [Float](repeating: 0, count: 2 * transform.binCount)
    }

    public func reset() {
        for channel in channels { channel.reset() }
        stage.reset()
    }

    public func process(_ block: inout AudioBlock) {
        guard let fft else { preconditionFailure("SpectralProcessor.process before prepare") }
        for c in 0..<min(block.channelCount, channels.count) {
            let state = channels[c]
            let samples = block.channel(c)
            for i in 0..<samples.count {
                if state.collector.push(samples[i]) {
                    synthesizeFrame(state, channel: c, fft: fft)
                }
                samples[i] = state.output[state.outputIndex]
                state.outputIndex += 1
            }
        }
    }

    private func synthesizeFrame(_ state: ChannelState, channel: Int, fft: RealFFT) {
        let n = configuration.frameSize, hop = configuration.hop
        configuration.analysisWindow.withUnsafeBufferPointer { window in
            state.collector.history.withUnsafeBufferPointer { frame in
                for i in 0..<n { fft.time[i] = frame[i] * window[i] }
            }
        }
        fft.forward()
        stage.process(spectrum: fft.spectrum, channel: channel)
        let start = configuration.synthesisStart
        // This frame's share of the next hop: all that is known of it yet, for the limiter alone.
        let known = state.limiter == nil ? 0 : max(0, min(hop, n - start - hop))
        if let split = state.splitBin, let limiter = state.limiter {
            let spectrum = fft.spectrum
            spectrumCopy.withUnsafeMutableBufferPointer { copy in
                _ = copy.update(fromContentsOf: spectrum)
                spectrum.update(repeating: 0)
                for i in (2 * split)..<spectrum.count { spectrum[i] = copy[i] }
                fft.inverse()
                overlapAdd(fft.time, into: state.upperOverlapAdd, hop: state.upper, ahead: state.upperAhead, known: known)
                for i in 0..<(2 * split) { spectrum[i] = copy[i] }
                for i in (2 * split)..<spectrum.count { spectrum[i] = 0 }
            }
            fft.inverse()
            overlapAdd(fft.time, into: state.overlapAdd, hop: state.output, ahead: state.ahead, known: known)
            limiter.limit(lower: state.output, upper: UnsafeBufferPointer(state.upper),
                          lowerAhead: UnsafeBufferPointer(rebasing: state.ahead[0..<known]),
                          upperAhead: UnsafeBufferPointer(rebasing: state.upperAhead[0..<known]))
        } else {
            fft.inverse()
            overlapAdd(fft.time, into: state.overlapAdd, hop: state.output, ahead: state.ahead, known: known)
            state.limiter?.limit(state.output, ahead: UnsafeBufferPointer(rebasing: state.ahead[0..<known]))
        }
        state.collector.advance()
        state.outputIndex = 0
    }

    /// Overlap-adds one synthesised frame into `ola`, sets `hop` to the samples now final and
    /// `ahead` to what is known of the next `known`, and moves `ola` on by a hop.
    private func overlapAdd(_ time: UnsafeMutableBufferPointer<Float>, into ola: UnsafeMutableBufferPointer<Float>,
                            hop output: UnsafeMutableBufferPointer<Float>, ahead: UnsafeMutableBufferPointer<Float>, known: Int) {
        let n = configuration.frameSize, hop = configuration.hop, start = configuration.synthesisStart
        configuration.synthesisWindow.withUnsafeBufferPointer { window in
            for i in 0..<n { ola[i] += time[i] * window[i] }
        }
        gains.withUnsafeBufferPointer { gains in
            for i in 0..<hop { output[i] = ola[start + i] * gains[i] }
            for i in 0..<known { ahead[i] = ola[start + hop + i] * gains[i] }
        }
        let base = ola.baseAddress!
        base.update(from: base + hop, count: n - hop)
        (base + n - hop).update(repeating: 0, count: hop)
    }
}

/// A stage that leaves every spectrum as it is: STFT → ISTFT alone.
public struct IdentitySpectralStage: SpectralStage {
    public init() {}
    public mutating func prepare(binCount: Int, spec: ProcessSpec) throws {}
    public mutating func process(spectrum: UnsafeMutableBufferPointer<Float>, channel: Int) {}
    public mutating func reset() {}
}

/// Streaming analysis alone: calls back with each frame's spectrum as soon as it is complete.
/// Used by detectors and meters that read spectra but never resynthesise.
public struct STFTAnalyzer {
    public let configuration: STFTConfiguration
    public let fft: RealFFT
    private var collector: FrameCollector

    public init(configuration: STFTConfiguration) {
        self.configuration = configuration
        fft = RealFFT(size: configuration.frameSize)
        collector = FrameCollector(frameSize: configuration.frameSize, hop: configuration.hop)
    }

    /// Feeds samples; `onFrame` sees `fft.spectrum` of each completed frame.
    public mutating func analyze(_ samples: UnsafeBufferPointer<Float>, onFrame: (RealFFT) -> Void) {
        let n = configuration.frameSize
        for sample in samples where collector.push(sample) {
            configuration.analysisWindow.withUnsafeBufferPointer { window in
                collector.history.withUnsafeBufferPointer { frame in
                    for i in 0..<n { fft.time[i] = frame[i] * window[i] }
                }
            }
            fft.forward()
            onFrame(fft)
            collector.advance()
        }
    }

    public mutating func reset() { collector.reset() }
}
