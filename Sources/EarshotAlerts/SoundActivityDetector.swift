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

    public private(set) var noiseFloorDBFS = Double.nan
    private var analyzer: STFTAnalyzer
    private let windowEnergy: Double
    private var sampleRate = 16_000.0
    private var frameIndex = 0
    private var mono: [Float] = []

    // Events as gathered on the audio path, in storage sized once in `prepare` so gathering
    // never allocates: per event its start, last active frame and peak, and up to eight
    // clusters of dominant frequencies (mean Hz and frame count). `recorded` events are
    // finished; the slot after them is the one being gathered while `isOpen`.
    static let eventCapacity = 1024, clustersPerEvent = 8
    private var starts: [Double] = [], lastActive: [Double] = [], peaks: [Double] = []
    private var clusterHz: [Double] = [], clusterFrames: [Int] = [], clusterCounts: [Int] = []
    private var recorded = 0
    private var isOpen = false

    /// The events found so far, strongest frequencies first. Builds new values: read it off
    /// the audio path.
    public var events: [SoundEvent] {
        (0..<recorded).map { e in
            let clusters = (0..<clusterCounts[e]).map { (hz: clusterHz[e * Self.clustersPerEvent + $0], frames: clusterFrames[e * Self.clustersPerEvent + $0]) }
            let total = clusters.reduce(0) { $0 + $1.frames }
            let dominant = clusters.filter { Double($0.frames) >= 0.15 * Double(total) }.sorted { $0.frames > $1.frames }.map { $0.hz.rounded() }
            return SoundEvent(startSeconds: max(0, starts[e]), endSeconds: lastActive[e] + Double(hop) / sampleRate,
                              peakLevelDBFS: peaks[e], dominantFrequenciesHz: dominant)
        }
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
        let events = Self.eventCapacity, clusters = events * Self.clustersPerEvent
        (starts, lastActive, peaks) = ([Double](repeating: 0, count: events), [Double](repeating: 0, count: events), [Double](repeating: 0, count: events))
        (clusterHz, clusterFrames) = ([Double](repeating: 0, count: clusters), [Int](repeating: 0, count: clusters))
        clusterCounts = [Int](repeating: 0, count: events)
        reset()
    }

    public func reset() {
        analyzer.reset()
        noiseFloorDBFS = .nan
        frameIndex = 0
        recorded = 0
        isOpen = false
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
        if isOpen { close() }
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
            if !isOpen {
                guard recorded < Self.eventCapacity else { return }
                (starts[recorded], peaks[recorded], clusterCounts[recorded]) = (time, level, 0)
                isOpen = true
            }
            let e = recorded, base = e * Self.clustersPerEvent
            lastActive[e] = time
            peaks[e] = max(peaks[e], level)
            let hz = interpolatedPeakHz(fft, bin: strongestBin)
            var matched = false
            for c in 0..<clusterCounts[e] where abs(clusterHz[base + c] - hz) < 0.03 * hz {
                let frames = Double(clusterFrames[base + c])
                clusterHz[base + c] = (clusterHz[base + c] * frames + hz) / (frames + 1)
                clusterFrames[base + c] += 1
                matched = true
                break
            }
            if !matched && clusterCounts[e] < Self.clustersPerEvent {
                (clusterHz[base + clusterCounts[e]], clusterFrames[base + clusterCounts[e]]) = (hz, 1)
                clusterCounts[e] += 1
            }
        } else if isOpen, time - lastActive[recorded] > bridgeSeconds {
            close()
        }
    }

    /// Ends the event being gathered: kept if it lasted long enough, its slot reused if not.
    private func close() {
        isOpen = false
        let end = lastActive[recorded] + Double(hop) / sampleRate
        if end - starts[recorded] >= minimumSeconds { recorded += 1 }
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
