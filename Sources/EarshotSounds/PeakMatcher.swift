import EarshotDSP
import Foundation

/// The method Earshot's doorbell notifier started from, kept to compare against: a 4096-point
/// Hamming-windowed spectrum of the reference, its two strongest peaks; a match wherever a frame
/// of the stream has the same two strongest peaks (to the bin).
public final class PeakMatcher {
    public static let size = 4096
    public let name: String
    /// The reference's two strongest peaks, as FFT bins.
    public let peaks: Set<Int>
    private let fft = RealFFT(size: size)
    private let window = Window.hamming.coefficients(count: size)

    public init(name: String, reference: [Float]) {
        self.name = name
        var loudest = [Float](repeating: 0, count: Self.size)
        // The reference's loudest 4096 samples.
        var best = 0, bestEnergy: Float = -1
        for start in stride(from: 0, through: max(0, reference.count - Self.size), by: Self.size / 4) {
            let energy = reference[start..<min(reference.count, start + Self.size)].reduce(0) { $0 + $1 * $1 }
            if energy > bestEnergy { bestEnergy = energy; best = start }
        }
        for n in 0..<min(Self.size, reference.count - best) { loudest[n] = reference[best + n] }
        peaks = Self.topTwo(loudest, fft: fft, window: window)
    }

    /// Whether a frame of `size` samples holds the reference's two strongest peaks.
    public func matches(_ frame: ArraySlice<Float>) -> Bool {
        Self.topTwo(Array(frame), fft: fft, window: window) == peaks
    }

    static func topTwo(_ samples: [Float], fft: RealFFT, window: [Float]) -> Set<Int> {
        for n in 0..<size { fft.time[n] = n < samples.count ? samples[n] * window[n] : 0 }
        fft.forward()
        var magnitudes = [Float](repeating: 0, count: size / 2 + 1)
        for bin in magnitudes.indices {
            let re = fft.spectrum[2 * bin], im = fft.spectrum[2 * bin + 1]
            magnitudes[bin] = re * re + im * im
        }
        magnitudes[0] = 0
        // Local maxima only, so one peak's skirt is not its second.
        var candidates: [(bin: Int, power: Float)] = []
        for bin in 1..<(magnitudes.count - 1) where magnitudes[bin] > magnitudes[bin - 1] && magnitudes[bin] >= magnitudes[bin + 1] {
            candidates.append((bin, magnitudes[bin]))
        }
        return Set(candidates.sorted { $0.power > $1.power }.prefix(2).map(\.bin))
    }

    /// Detections in a whole recording at 16 kHz: frames every half window; consecutive
    /// matching frames make one detection.
    public static func detect(_ samples: [Float], matchers: [PeakMatcher], sampleRate: Double) -> [SoundDetection] {
        var found: [SoundDetection] = []
        for matcher in matchers {
            var active: (start: Double, last: Double)?
            for start in stride(from: 0, through: samples.count - size, by: size / 2) {
                let end = Double(start + size) / sampleRate
                if matcher.matches(samples[start..<(start + size)]) {
                    active = (active?.start ?? end, end)
                } else if let a = active {
                    found.append(SoundDetection(sound: matcher.name, start: a.start, end: a.last, score: 1))
                    active = nil
                }
            }
            if let a = active { found.append(SoundDetection(sound: matcher.name, start: a.start, end: a.last, score: 1)) }
        }
        return found
    }
}
