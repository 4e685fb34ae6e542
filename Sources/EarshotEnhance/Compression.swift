import EarshotCore
import EarshotDSP
import Foundation

/// One band of a wide dynamic range compressor: how much gain at which input level.
///
/// Levels are band levels in dB SPL, as the band's own share of the input (a full-scale sine is
/// `Compression.fullScaleDBSPL`). The gain is held below the first knee, linear in the input
/// level between knees, and continues the last segment's slope above the last knee; the band's
/// output never exceeds `maximumOutputDBSPL`.
public struct CompressionBand: Equatable, Sendable {
    public var centreHz: Double
    /// (input band level dB SPL, gain dB), input levels ascending.
    public var knees: [(levelDBSPL: Double, gainDB: Double)]
    public var maximumOutputDBSPL: Double

    public init(centreHz: Double, knees: [(levelDBSPL: Double, gainDB: Double)], maximumOutputDBSPL: Double) {
        self.centreHz = centreHz
        self.knees = knees
        self.maximumOutputDBSPL = maximumOutputDBSPL
    }

    public static func == (a: CompressionBand, b: CompressionBand) -> Bool {
        a.centreHz == b.centreHz && a.maximumOutputDBSPL == b.maximumOutputDBSPL
            && a.knees.map(\.levelDBSPL) == b.knees.map(\.levelDBSPL) && a.knees.map(\.gainDB) == b.knees.map(\.gainDB)
    }

    /// The static input/output rule: gain in dB for a steady input band level.
    public func gainDB(atLevelDBSPL level: Double) -> Double {
        guard let first = knees.first else { return 0 }
        var gain = first.gainDB
        if level > first.levelDBSPL, knees.count > 1 {
            var i = 1
            while i < knees.count - 1 && level > knees[i].levelDBSPL { i += 1 }
            let (a, b) = (knees[i - 1], knees[i])
            gain = a.gainDB + (b.gainDB - a.gainDB) * (level - a.levelDBSPL) / (b.levelDBSPL - a.levelDBSPL)
        }
        return min(gain, maximumOutputDBSPL - level)
    }
}

/// What a compressor does to each channel (each ear), and how fast.
public struct Compression: Equatable, Sendable {
    /// Bands per channel, centres ascending; channel c uses `channels[min(c, count - 1)]`.
    public var channels: [[CompressionBand]]
    /// The dB SPL of a full-scale sine at the input.
    public var fullScaleDBSPL: Double
    /// Level-detector time constants (ANSI S3.22 style: to within 3 dB of a 35 dB step).
    public var attackSeconds: Double
    public var releaseSeconds: Double
    /// The most any output sample may be, dBFS: a look-ahead limiter inside the STFT's delay
    /// holds the peaks under it (`HopLimiter`), so a band level under its maximum can never
    /// come out as a waveform cut at full scale. Nil for none.
    public var limitDBFS: Double?
    /// Per channel (as `channels`), where the limiter splits the output to take what it must
    /// from the frequencies above first; nil for the whole output at once.
    public var limiterSplitHz: [Double?]

    public init(channels: [[CompressionBand]], fullScaleDBSPL: Double = 100, attackSeconds: Double = 0.005, releaseSeconds: Double = 0.1,
                limitDBFS: Double? = nil, limiterSplitHz: [Double?] = []) {
        self.channels = channels
        self.fullScaleDBSPL = fullScaleDBSPL
        self.attackSeconds = attackSeconds
        self.releaseSeconds = releaseSeconds
        self.limitDBFS = limitDBFS
        self.limiterSplitHz = limiterSplitHz
    }

    /// The limiter's own ceiling: a tenth of a decibel under the limit, so the output guard
    /// after it (which pins samples, exactly at the limit) has only rounding left to catch.
    public var limiterCeilingDBFS: Double? { limitDBFS.map { $0 - 0.1 } }

    func validate() throws {
        guard !channels.isEmpty, channels.allSatisfy({ !$0.isEmpty }) else {
            throw EnhanceError.noBands
        }
        for bands in channels {
            guard zip(bands, bands.dropFirst()).allSatisfy({ $0.centreHz < $1.centreHz }), bands[0].centreHz > 0 else {
                throw EnhanceError.bandOrder
            }
            for band in bands {
                let levels = band.knees.map(\.levelDBSPL)
                guard !levels.isEmpty, zip(levels, levels.dropFirst()).allSatisfy({ $0 < $1 }),
                      (band.knees.flatMap { [$0.levelDBSPL, $0.gainDB] } + [band.maximumOutputDBSPL]).allSatisfy(\.isFinite)
                else {
                    throw EnhanceError.knees(centreHz: band.centreHz)
                }
            }
        }
        guard fullScaleDBSPL.isFinite, attackSeconds > 0, releaseSeconds > 0, attackSeconds.isFinite, releaseSeconds.isFinite else {
            throw EnhanceError.timing
        }
        if let limitDBFS, !(limitDBFS.isFinite && limitDBFS <= 0) {
            throw EnhanceError.limit(dBFS: limitDBFS)
        }
        if let split = limiterSplitHz.compactMap({ $0 }).first(where: { !($0.isFinite && $0 > 0) }) {
            throw EnhanceError.limiterSplit(hz: split)
        }
    }
}

/// Multiband wide dynamic range compression in the spectral domain of a low-delay STFT.
///
/// Each frame's bins are summed into bands (edges halfway, in log frequency, between centres);
/// each band's level in dB SPL is smoothed with the attack and release times; its rule gives a
/// gain, capped so the band stays under its maximum output; the gains are interpolated across
/// frequency, linearly in dB over log frequency between band centres. The curve is smooth in
/// frequency, so its impulse response is short and the 8 ms synthesis window of the low-delay
/// STFT does not alias it in time.
public struct CompressionStage: SpectralStage {
    public let compression: Compression
    let hop: Int
    let frameSize: Int
    /// Converts a band's summed |X|² to its level re a full-scale sine.
    private(set) var powerScale: Float = 1
    private var attack: Float = 0
    private var release: Float = 0
    /// Per channel: its bands' bins, and how band gains spread over the bins.
    private var layouts: [BandLayout] = []
    /// Per channel and band: the smoothed level (dB SPL).
    private var levels: [[Float]] = []
    /// Per band, for the frame at hand: its power, then its gain in dB.
    private var power: [Float] = []
    private var bandGains: [Float] = []
    private var firstFrame: [Bool] = []

    public init(compression: Compression, frameSize: Int, hop: Int) {
        self.compression = compression
        self.frameSize = frameSize
        self.hop = hop
    }

    /// The bands of `channel`.
    private func bands(_ channel: Int) -> [CompressionBand] { compression.channels[min(channel, compression.channels.count - 1)] }

    public mutating func prepare(binCount: Int, spec: ProcessSpec) throws {
        try compression.validate()
        let windowEnergy = STFTConfiguration.lowDelay(frameSize: frameSize, hop: hop).analysisWindow.reduce(0) { $0 + Double($1 * $1) }
        // One-sided Parseval: Σ|X_k|² ≈ (N/2)·Σw²·mean(x²); a full-scale sine has mean(x²) = 1/2.
        powerScale = Float(2 / (Double(frameSize) * windowEnergy) / 0.5)
        let hopSeconds = Double(hop) / spec.sampleRate
        attack = Float(exp(-hopSeconds / compression.attackSeconds))
        release = Float(exp(-hopSeconds / compression.releaseSeconds))
        let binHz = spec.sampleRate / Double(frameSize)
        layouts = (0..<spec.channelCount).map { BandLayout(centresHz: bands($0).map(\.centreHz), binCount: binCount, binHz: binHz) }
        levels = (0..<spec.channelCount).map { [Float](repeating: 0, count: bands($0).count) }
        let mostBands = compression.channels.map(\.count).max() ?? 0
        power = [Float](repeating: 0, count: mostBands)
        bandGains = [Float](repeating: 0, count: mostBands)
        firstFrame = [Bool](repeating: true, count: spec.channelCount)
    }

    public mutating func reset() {
        for c in firstFrame.indices { firstFrame[c] = true }
    }

    public mutating func process(spectrum: UnsafeMutableBufferPointer<Float>, channel c: Int) {
        guard c < levels.count else { return }
        let layout = layouts[c]
        let bins = spectrum.count / 2
        let fullScale = Float(compression.fullScaleDBSPL)
        let channelBands = bands(c)
        for b in channelBands.indices { power[b] = 0 }
        layout.owner.withUnsafeBufferPointer { owner in
            for k in 0..<bins { power[owner[k]] += spectrum[2 * k] * spectrum[2 * k] + spectrum[2 * k + 1] * spectrum[2 * k + 1] }
        }
        for b in channelBands.indices {
            let level = 10 * log10f(power[b] * powerScale + 1e-12) + fullScale
            var smoothed = levels[c][b]
            if firstFrame[c] { smoothed = level } else {
                let coefficient = level > smoothed ? attack : release
                smoothed = coefficient * smoothed + (1 - coefficient) * level
            }
            levels[c][b] = smoothed
            bandGains[b] = Float(channelBands[b].gainDB(atLevelDBSPL: Double(smoothed)))
        }
        firstFrame[c] = false
        bandGains.withUnsafeBufferPointer { gains in
            for k in 0..<bins {
                let gain = expf(layout.value(atBin: k, of: gains) * 0.115129255)  // 10^(dB/20)
                spectrum[2 * k] *= gain
                spectrum[2 * k + 1] *= gain
            }
        }
    }
}

/// A multiband wide dynamic range compressor (WDRC), the amplification stage of a hearing aid,
/// on its own: the same low-delay STFT as the noise suppressor (7.9 ms), which hosts the same
/// stage inside its own STFT when both run, so that together they add no more delay.
/// Runs at 16 or 48 kHz; channel c gets `compression.channels[c]` (the last for any beyond).
public final class WideDynamicRangeCompressor: AudioProcessor {
    public let compression: Compression
    private var processor: SpectralProcessor<CompressionStage>?

    public init(_ compression: Compression) throws {
        try compression.validate()
        self.compression = compression
    }

    public var latencySamples: Int { processor?.latencySamples ?? 0 }

    public func prepare(_ spec: ProcessSpec) throws {
        guard NoiseSuppressor.nativeRates.contains(spec.sampleRate) else {
            throw EarshotError.rateNotRun(what: "the compressor", supportedHz: NoiseSuppressor.nativeRates, rate: spec.sampleRate)
        }
        let configuration = NoiseSuppressor.stftConfiguration(sampleRate: spec.sampleRate)
        let processor = SpectralProcessor(
            configuration: configuration, stage: CompressionStage(compression: compression, frameSize: configuration.frameSize, hop: configuration.hop),
            limitDBFS: compression.limiterCeilingDBFS, limiterSplitHz: compression.limiterSplitHz)
        try processor.prepare(spec)
        self.processor = processor
    }

    public func process(_ block: inout AudioBlock) { processor!.process(&block) }
    public func reset() { processor?.reset() }
}
