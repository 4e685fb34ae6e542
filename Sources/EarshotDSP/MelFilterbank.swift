import Foundation

/// The two mel scales in common use.
public enum MelScale: Sendable {
    /// O'Shaughnessy / HTK: 2595 · log10(1 + f / 700).
    case htk
    /// Slaney's Auditory Toolbox: linear below 1 kHz, logarithmic above (librosa's default).
    case slaney

    public func mel(fromHz hz: Double) -> Double {
        switch self {
        case .htk:
            return 2595 * log10(1 + hz / 700)
        case .slaney:
            let linearStep = 200.0 / 3, breakHz = 1000.0, breakMel = breakHz / linearStep
            let logStep = log(6.4) / 27
            return hz < breakHz ? hz / linearStep : breakMel + log(hz / breakHz) / logStep
        }
    }

    public func hz(fromMel mel: Double) -> Double {
        switch self {
        case .htk:
            return 700 * (pow(10, mel / 2595) - 1)
        case .slaney:
            let linearStep = 200.0 / 3, breakHz = 1000.0, breakMel = breakHz / linearStep
            let logStep = log(6.4) / 27
            return mel < breakMel ? mel * linearStep : breakHz * exp(logStep * (mel - breakMel))
        }
    }
}

/// Triangular mel filters over the bins of a real FFT, built as `librosa.filters.mel` builds
/// them, so features computed here match features computed there.
public struct MelFilterbank: Sendable {
    public let melCount: Int
    public let binCount: Int
    /// Row-major `melCount × binCount` weights.
    public let weights: [Float]
    /// For each filter, the range of bins where its weight is non-zero.
    public let supports: [Range<Int>]

    /// - Parameter areaNormalized: Slaney normalisation (each filter's area is constant,
    ///   librosa's `norm="slaney"`); false leaves unit peaks (`norm=None`).
    public init(
        sampleRate: Double, fftSize: Int, melCount: Int,
        minimumHz: Double = 0, maximumHz: Double? = nil,
        scale: MelScale = .slaney, areaNormalized: Bool = true
    ) {
        precondition(melCount >= 1 && fftSize >= 2 && sampleRate > 0)
        let top = maximumHz ?? sampleRate / 2
        let bins = fftSize / 2 + 1
        let binHz = (0..<bins).map { sampleRate / 2 * Double($0) / Double(bins - 1) }
        let lowMel = scale.mel(fromHz: minimumHz), highMel = scale.mel(fromHz: top)
        let edgesHz = (0..<(melCount + 2)).map {
            scale.hz(fromMel: lowMel + (highMel - lowMel) * Double($0) / Double(melCount + 1))
        }
        var weights = [Float](repeating: 0, count: melCount * bins)
        var supports: [Range<Int>] = []
        for m in 0..<melCount {
            let lower = edgesHz[m], center = edgesHz[m + 1], upper = edgesHz[m + 2]
            let normalization = areaNormalized ? 2 / (upper - lower) : 1
            var first = bins, last = 0
            for k in 0..<bins {
                let rising = (binHz[k] - lower) / (center - lower)
                let falling = (upper - binHz[k]) / (upper - center)
                let w = max(0, min(rising, falling)) * normalization
                if w > 0 {
                    weights[m * bins + k] = Float(w)
                    first = min(first, k)
                    last = max(last, k + 1)
                }
            }
            supports.append(first < last ? first..<last : 0..<0)
        }
        self.melCount = melCount
        self.binCount = bins
        self.weights = weights
        self.supports = supports
    }

    /// Mel energies from power spectrum `power` (`binCount` values) into `mel` (`melCount`).
    public func apply(power: UnsafeBufferPointer<Float>, into mel: UnsafeMutableBufferPointer<Float>) {
        precondition(power.count >= binCount && mel.count >= melCount)
        weights.withUnsafeBufferPointer { w in
            for m in 0..<melCount {
                var sum: Float = 0
                for k in supports[m] { sum += w[m * binCount + k] * power[k] }
                mel[m] = sum
            }
        }
    }
}

/// Power spectra in decibels.
public enum LogPower {
    /// 10 · log10(max(power, floor)) for each bin of `fft`'s current spectrum.
    public static func decibels(
        of fft: RealFFT, into output: UnsafeMutableBufferPointer<Float>, floor: Float = 1e-10
    ) {
        precondition(output.count >= fft.binCount)
        for k in 0..<fft.binCount { output[k] = 10 * log10f(max(fft.power(bin: k), floor)) }
    }

    /// 10 · log10(max(x, floor)) in place.
    public static func decibelsInPlace(_ values: UnsafeMutableBufferPointer<Float>, floor: Float = 1e-10) {
        for i in values.indices { values[i] = 10 * log10f(max(values[i], floor)) }
    }
}
