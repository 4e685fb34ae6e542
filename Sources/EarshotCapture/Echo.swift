import EarshotDSP
import Foundation

/// A distinct echo: a delayed copy of the speech (a loudspeaker heard back by the microphone, a
/// second path through a call). Whitening the whole recording with one long-term predictor keeps
/// the echo's relation exact — e(t) = s(t) + a·s(t − D) whitens to the same sum — while taking
/// away the spectral colour that makes speech correlate with itself; the whitened signal's
/// autocorrelation then peaks at the echo's delay.
struct EchoMeasure {
    /// The strongest echo's delay and level relative to the direct sound (dB), when one stood out.
    let delaySeconds: Double?
    let levelDB: Double
    let correlation: Double

    static let shortestSeconds = 0.04
    static let longestSeconds = 0.6
    static let predictorOrder = 24
    /// The rate the predictor's order was chosen for; wider recordings are measured at it.
    static let rate = 16_000.0
    /// The normalised autocorrelation an echo must reach (0.12 ≈ an echo 18 dB down).
    static let leastCorrelation = 0.12

    init(_ signal: [Float], sampleRate: Double) {
        let n = signal.count
        let shortest = Int(Self.shortestSeconds * sampleRate), longest = Int(Self.longestSeconds * sampleRate)
        guard n > 2 * longest else {
            delaySeconds = nil
            levelDB = -140
            correlation = 0
            return
        }
        let r = Self.autocorrelation(signal, lags: Self.predictorOrder + 1)
        let predictor = Self.levinson(r, order: Self.predictorOrder)
        var residual = [Float](repeating: 0, count: n)
        for t in 0..<n {
            var e = Double(signal[t])
            for j in 1...Self.predictorOrder where t - j >= 0 { e += predictor[j] * Double(signal[t - j]) }
            residual[t] = Float(e)
        }
        let rr = Self.autocorrelation(residual, lags: longest + 1)
        guard rr[0] > 0 else {
            delaySeconds = nil
            levelDB = -140
            correlation = 0
            return
        }
        var best = shortest
        for lag in shortest...longest where rr[lag] > rr[best] { best = lag }
        let c = rr[best] / rr[0]
        correlation = c
        if c >= Self.leastCorrelation {
            delaySeconds = Double(best) / sampleRate
            // c = a / (1 + a²) for an echo of gain a.
            let a = c >= 0.5 ? 1 : (1 - (1 - 4 * c * c).squareRoot()) / (2 * c)
            levelDB = Level.dB(amplitude: a)
        } else {
            delaySeconds = nil
            levelDB = -140
        }
    }

    /// The first `lags` values of the autocorrelation, through one FFT.
    static func autocorrelation(_ x: [Float], lags: Int) -> [Double] {
        let size = RealFFT.fastSize(atLeast: x.count + lags)
        let fft = RealFFT(size: size, planning: .estimate)
        fft.time.update(repeating: 0)
        for i in x.indices { fft.time[i] = x[i] }
        fft.forward()
        for k in 0..<fft.binCount {
            fft.spectrum[2 * k] = fft.power(bin: k)
            fft.spectrum[2 * k + 1] = 0
        }
        fft.inverse()
        return (0..<lags).map { Double(fft.time[$0]) }
    }

    /// Levinson–Durbin: A(z) = 1 + Σ a_j z^-j from autocorrelation values.
    static func levinson(_ r: [Double], order: Int) -> [Double] {
        var a = [Double](repeating: 0, count: order + 1)
        a[0] = 1
        var error = r[0] * (1 + 1e-9) + 1e-20
        for i in 1...order {
            var acc = r[i]
            for j in 1..<i { acc += a[j] * r[i - j] }
            let k = -acc / error
            let previous = a
            for j in 1..<i { a[j] = previous[j] + k * previous[i - j] }
            a[i] = k
            error *= (1 - k * k)
            if error <= 0 { break }
        }
        return a
    }
}
