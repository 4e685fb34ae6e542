import EarshotDSP
import Foundation

/// How late the far end reaches the microphone: the lag of the phase-transform weighted
/// cross-correlation (GCC-PHAT), which keeps the direct path's sharp peak however coloured the
/// speech and the room, measured over stretches where the far end plays.
public enum EchoDelay {
    /// Delays found in successive `windowSeconds` stretches (seconds), where a clear peak stood out.
    public static func estimate(mic: [Float], far: [Float], sampleRate: Double, longestSeconds: Double = 0.6,
                                windowSeconds: Double = 4) -> [Double] {
        timedEstimates(mic: mic, far: far, sampleRate: sampleRate, longestSeconds: longestSeconds, windowSeconds: windowSeconds).map(\.delay)
    }

    /// Each clear delay with the time of its stretch's middle (seconds).
    static func timedEstimates(mic: [Float], far: [Float], sampleRate: Double, longestSeconds: Double = 0.6,
                               windowSeconds: Double = 4) -> [(time: Double, delay: Double)] {
        let window = Int(windowSeconds * sampleRate), longest = Int(longestSeconds * sampleRate)
        let size = RealFFT.fastSize(atLeast: window + longest)
        let fft = RealFFT(size: size, planning: .estimate)
        var found: [(time: Double, delay: Double)] = []
        var start = 0
        while start + window <= min(mic.count, far.count) {
            defer { start += window / 2 }
            let farPart = far[start..<(start + window)]
            guard farPart.reduce(0, { $0 + $1 * $1 }) / Float(window) > 1e-7 else { continue }
            fft.time.update(repeating: 0)
            for (i, x) in farPart.enumerated() { fft.time[i] = x }
            fft.forward()
            let farSpectrum = Array(fft.spectrum)
            fft.time.update(repeating: 0)
            for i in 0..<window { fft.time[i] = mic[start + i] }
            fft.forward()
            // Cross-spectrum mic · conj(far), whitened.
            for k in 0..<fft.binCount {
                let ar = fft.spectrum[2 * k], ai = fft.spectrum[2 * k + 1]
                let br = farSpectrum[2 * k], bi = farSpectrum[2 * k + 1]
                let re = ar * br + ai * bi, im = ai * br - ar * bi
                let magnitude = (re * re + im * im).squareRoot() + 1e-12
                fft.spectrum[2 * k] = re / magnitude
                fft.spectrum[2 * k + 1] = im / magnitude
            }
            fft.inverse()
            var best = 0, peak: Float = 0, sum: Float = 0
            for lag in 0...longest {
                let value = fft.time[lag]
                sum += abs(value)
                if value > peak { (best, peak) = (lag, value) }
            }
            // A clear peak: well over the mean magnitude of the lags searched.
            if peak > 8 * sum / Float(longest + 1) {
                found.append((Double(start + window / 2) / sampleRate, Double(best) / sampleRate))
            }
        }
        return found
    }

    /// How much faster the loudspeaker's clock runs than the microphone's (as a fraction: 1e-4 is
    /// 100 ppm), read off a delay that grows or shrinks steadily through the recording; nil where
    /// it does not (too few clear stretches, under 20 ppm, or delays that jump: a moved
    /// loudspeaker, not a clock). An adaptive filter chases drift for ever; played back at the
    /// microphone's clock, the far end holds still.
    public static func drift(mic: [Float], far: [Float], sampleRate: Double) -> Double? {
        let points = timedEstimates(mic: mic, far: far, sampleRate: sampleRate)
        guard points.count >= 4, let first = points.first, let last = points.last, last.time - first.time >= 10 else { return nil }
        // Theil–Sen: the median of the slopes between every two stretches, so that a stretch whose
        // peak came from elsewhere (a reflection, the near end) cannot tilt the line.
        var slopes: [Double] = []
        for i in points.indices {
            for j in points.indices where points[j].time > points[i].time {
                slopes.append((points[j].delay - points[i].delay) / (points[j].time - points[i].time))
            }
        }
        let slope = median(slopes)
        let offset = median(points.map { $0.delay - slope * $0.time })
        // Most stretches must lie on the line, within the four samples a peak wanders by.
        let onLine = points.filter { abs($0.delay - offset - slope * $0.time) <= 4 / sampleRate }.count
        guard Double(onLine) >= 0.75 * Double(points.count), abs(slope) >= 20e-6, abs(slope) <= 1e-3 else { return nil }
        return slope
    }

    private static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }

    /// Room left in the filter before the earliest arrival, and after the latest.
    static let guardSeconds = 0.02
    static let roomSeconds = 0.25
    static let shortestTailSeconds = 0.2

    /// The far end moved up to just before the loudspeaker's earliest arrival, so the echo
    /// canceller's filter spends its length on the room rather than on the delay; with the
    /// filter length that still covers the latest arrival. Unchanged where no delay stands out.
    public static func align(far: [Float], to mic: [Float], sampleRate: Double, longestTailSeconds: Double) -> (samples: [Float], tailSeconds: Double) {
        let delays = estimate(mic: mic, far: far, sampleRate: sampleRate)
        guard let earliest = delays.min(), let latest = delays.max() else { return (far, longestTailSeconds) }
        let lead = max(0, earliest - guardSeconds)
        let tail = min(longestTailSeconds, max(shortestTailSeconds, latest - lead + roomSeconds))
        let shift = min(far.count, Int(lead * sampleRate))
        return ([Float](repeating: 0, count: shift) + far.prefix(far.count - shift), tail)
    }
}
