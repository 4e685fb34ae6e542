import Foundation

/// Analysis and synthesis windows.
///
/// `periodic` windows (the default) are the DFT-even form used for spectral analysis and
/// overlap-add, as `scipy.signal.get_window` returns; symmetric ones suit filter design.
public enum Window: Equatable, Sendable {
    case rectangular
    case hann
    /// The square root of Hann: used for both analysis and synthesis, the pair sums to Hann.
    case sqrtHann
    case hamming
    case blackman
    case kaiser(beta: Double)

    public func coefficients(count: Int, periodic: Bool = true) -> [Float] {
        precondition(count >= 1)
        if count == 1 { return [1] }
        // A periodic window of length N is the symmetric window of length N + 1, minus its last point.
        let denominator = Double(periodic ? count : count - 1)
        return (0..<count).map { n in
            let x = Double(n) / denominator  // 0 … 1
            let value: Double
            switch self {
            case .rectangular: value = 1
            case .hann: value = 0.5 - 0.5 * cos(2 * .pi * x)
            case .sqrtHann: value = (0.5 - 0.5 * cos(2 * .pi * x)).squareRoot()
            case .hamming: value = 0.54 - 0.46 * cos(2 * .pi * x)
            case .blackman: value = 0.42 - 0.5 * cos(2 * .pi * x) + 0.08 * cos(4 * .pi * x)
            case .kaiser(let beta):
                let r = 2 * x - 1
                value = besselI0(beta * max(0, 1 - r * r).squareRoot()) / besselI0(beta)
            }
            return Float(value)
        }
    }
}

/// The modified Bessel function of the first kind, order zero, by its power series
/// (converges quickly for the beta values windows use).
func besselI0(_ x: Double) -> Double {
    var sum = 1.0, term = 1.0
    let quarterSquare = x * x / 4
    var k = 1.0
    while term > 1e-17 * sum {
        term *= quarterSquare / (k * k)
        sum += term
        k += 1
    }
    return sum
}
