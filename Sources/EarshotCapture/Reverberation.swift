import Foundation

/// Reverberation time estimated blindly from speech. Where speech stops, the room keeps
/// ringing, and no speech sound dies away faster than the room lets it: so the fastest decays of
/// the level in octave bands, read as dB per second over 200 ms, bound the room's decay rate.
/// Their 5th percentile, mapped by a line fitted on rooms of known RT60, gives RT60.
struct ReverberationMeasure {
    /// Seconds, or nil where too little of the recording stood above its room tone to measure.
    let rt60Seconds: Double?

    static let bandsHz: [Double] = [500, 1000, 2000, 4000]
    static let windowSeconds = 0.2
    /// A window counts while it ends this far above the band's quietest moments (2nd percentile)
    /// and starts within 50 dB of its loudest.
    static let aboveFloorDB = 6.0
    static let belowTopDB = 50.0
    static let percentile = 0.05
    static let fewestWindows = 50
    /// Raw estimate (−60 / the percentile's slope) → RT60: fitted on the tuning split's rooms
    /// (`make eval-soundcheck`; exponential decays of 0.8–1.8 s and measured rooms near 0.3 s).
    static let calibration = (offset: -0.297, slope: 1.445)

    init(_ spectrogram: PowerSpectrogram) {
        let nyquist = spectrogram.sampleRate / 2
        let window = max(3, Int((Self.windowSeconds / spectrogram.hopSeconds).rounded()))
        // Least-squares slope weights over the window.
        let centre = Double(window - 1) / 2
        let weights = (0..<window).map { Double($0) - centre }
        let norm = weights.reduce(0) { $0 + $1 * $1 }
        var slopes: [Double] = []
        for band in Self.bandsHz where band * 2.0.squareRoot() < nyquist {
            let low = band / 2.0.squareRoot(), high = band * 2.0.squareRoot()
            let levels = (0..<spectrogram.frames.count).map { Level.dB(power: spectrogram.power($0, fromHz: low, toHz: high)) }
            guard levels.count > window else { continue }
            let sorted = levels.sorted()
            let floor = sorted[Int(Double(sorted.count - 1) * 0.02)], top = sorted[sorted.count - 1]
            for start in 0...(levels.count - window) {
                guard levels[start + window - 1] > floor + Self.aboveFloorDB, levels[start] > top - Self.belowTopDB else { continue }
                var slope = 0.0
                for i in 0..<window { slope += weights[i] * levels[start + i] }
                slopes.append(slope / norm / spectrogram.hopSeconds)
            }
        }
        guard slopes.count >= Self.fewestWindows else {
            rt60Seconds = nil
            return
        }
        slopes.sort()
        let fastest = slopes[Int(Double(slopes.count - 1) * Self.percentile)]
        guard fastest < 0 else {
            rt60Seconds = nil
            return
        }
        rt60Seconds = max(0, Self.calibration.offset + Self.calibration.slope * (-60 / fastest))
    }
}
