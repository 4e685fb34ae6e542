import EarshotCore
import EarshotDSP
import Foundation

/// A sound that rose clearly above the background.
public struct SoundEvent: Equatable, Sendable, Codable {
    public var startSeconds: Double
    public var endSeconds: Double
    public var peakLevelDBFS: Double
    /// The frequencies that dominated the event's frames, strongest share first.
    public var dominantFrequenciesHz: [Double]
}

/// Finds sounds that stand out from the background, and the frequencies that make them up.
///
/// Each STFT frame's level is compared with a noise floor that falls at once and rises only
/// slowly (so steady background is learned and sudden sounds are not); frames above
/// floor + `thresholdDB` form events, gaps shorter than `bridgeSeconds` are bridged, and
/// events shorter than `minimumSeconds` are dropped. Audio passes through unchanged.
public final class SoundActivityDetector: AudioProcessor {
    public let frameSize: Int
    public let hop: Int
    public let thresholdDB: Double
    public let minimumSeconds: Double
    public let bridgeSeconds: Double
    /// How fast the floor may rise, in dB per second.
    public let floorRiseDBPerSecond: Double

    public private(set) var events: [SoundEvent] = []
    public private(set) var noiseFloorDBFS = Double.nan
    private var analyzer: STFTAnalyzer
    private let windowEnergy: Double
    private var sampleRate = 16_000.0
    private var frameIndex = 0
    private var open: OpenEvent?
    private var mono: [Float] = []

    /// An event still being gathered: its frames' dominant frequencies in a small fixed table.
    private struct OpenEvent {
        var start: Double, lastActive: Double, peak: Double
        var frequencies: [(hz: Double, frames: Int)]
    }

    public init(
        frameSize: Int = 1024, hop: Int = 256, thresholdDB: Double = 12,
        minimumSeconds: Double = 0.15, bridgeSeconds: Double = 0.6, floorRiseDBPerSecond: Double = 2
    ) {
        self.frameSize = frameSize
        self.hop = hop
        self.thresholdDB = thresholdDB
        self.minimumSeconds = minimumSeconds
        self.bridgeSeconds = bridgeSeconds
        self.floorRiseDBPerSecond = floorRiseDBPerSecond
        let configuration = STFTConfiguration(frameSize: frameSize, hop: hop, analysis: .hann)
        analyzer = STFTAnalyzer(configuration: configuration)
        windowEnergy = configuration.analysisWindow.reduce(0) { $0 + Double($1) * Double($1) }
    }

    public var latencySamples: Int { 0 }

    public func prepare(_ spec: ProcessSpec) throws {
        sampleRate = spec.sampleRate
        mono = [Float](repeating: 0, count: spec.maximumBlockFrames)
        events.reserveCapacity(1024)
        reset()
    }

    public func reset() {
        analyzer.reset()
        events.removeAll(keepingCapacity: true)
        noiseFloorDBFS = .nan
        frameIndex = 0
        open = nil
    }

    public func process(_ block: inout AudioBlock) {
        let scale = 1 / Float(block.channelCount)
        for i in 0..<block.frameCount {
            var sum: Float = 0
            for c in 0..<block.channelCount { sum += block.channel(c)[i] }
            mono[i] = sum * scale
        }
        mono.withUnsafeBufferPointer { samples in
            analyzer.analyze(UnsafeBufferPointer(rebasing: samples[..<block.frameCount])) { fft in
                self.analyzeFrame(fft)
            }
        }
    }

    /// Closes the event still open at the end of the input.
    public func finish() {
        if let current = open { close(current) }
        open = nil
    }

    private func analyzeFrame(_ fft: RealFFT) {
        let n = fft.size
        // Parseval over the one-sided spectrum gives the windowed frame's mean square.
        var total = 0.0, strongest = 0.0, strongestBin = 1
        let lowestBin = max(1, Int(50 * Double(n) / sampleRate))
        for k in 0..<fft.binCount {
            let power = Double(fft.power(bin: k))
            total += (k == 0 || 2 * k == n) ? power : 2 * power
            if k >= lowestBin && k < fft.binCount - 1 && power > strongest {
                strongest = power
                strongestBin = k
            }
        }
        let level = 10 * log10(max(total / (Double(n) * windowEnergy), 1e-20))
        let time = Double((frameIndex + 1) * hop - n / 2) / sampleRate
        frameIndex += 1
        // The first frames still hold the silence before the input: they say nothing of the floor.
        guard frameIndex * hop >= n else { return }
        let hopSeconds = Double(hop) / sampleRate
        noiseFloorDBFS = noiseFloorDBFS.isNaN ? level : min(level, noiseFloorDBFS + floorRiseDBPerSecond * hopSeconds)

        if level > noiseFloorDBFS + thresholdDB {
            let hz = interpolatedPeakHz(fft, bin: strongestBin)
            if open == nil { open = OpenEvent(start: time, lastActive: time, peak: level, frequencies: []) }
            open!.lastActive = time
            open!.peak = max(open!.peak, level)
            if let index = open!.frequencies.firstIndex(where: { abs($0.hz - hz) < 0.03 * hz }) {
                let cluster = open!.frequencies[index]
                open!.frequencies[index] = ((cluster.hz * Double(cluster.frames) + hz) / Double(cluster.frames + 1), cluster.frames + 1)
            } else if open!.frequencies.count < 8 {
                open!.frequencies.append((hz, 1))
            }
        } else if let current = open, time - current.lastActive > bridgeSeconds {
            close(current)
            open = nil
        }
    }

    private func close(_ event: OpenEvent) {
        let end = event.lastActive + Double(hop) / sampleRate
        guard end - event.start >= minimumSeconds, events.count < events.capacity else { return }
        let total = event.frequencies.reduce(0) { $0 + $1.frames }
        let dominant = event.frequencies
            .filter { Double($0.frames) >= 0.15 * Double(total) }
            .sorted { $0.frames > $1.frames }
            .map { ($0.hz).rounded() }
        events.append(SoundEvent(startSeconds: max(0, event.start), endSeconds: end, peakLevelDBFS: event.peak, dominantFrequenciesHz: dominant))
    }

    /// Refines a peak bin to a frequency by fitting a parabola through the log powers around it.
    private func interpolatedPeakHz(_ fft: RealFFT, bin k: Int) -> Double {
        let a = log(Double(fft.power(bin: k - 1)) + 1e-30)
        let b = log(Double(fft.power(bin: k)) + 1e-30)
        let c = log(Double(fft.power(bin: k + 1)) + 1e-30)
        let denominator = a - 2 * b + c
        let offset = denominator == 0 ? 0 : 0.5 * (a - c) / denominator
        return (Double(k) + offset) * sampleRate / Double(fft.size)
    }
}
