import Foundation

/// Spectrum bins grouped into bands around centre frequencies, and a band value spread back
/// over the bins. Band edges lie halfway between centres in log frequency; a value is
/// interpolated linearly over log frequency between centres and held beyond the outermost, so
/// the curve across frequency is smooth.
struct BandLayout {
    let bandCount: Int
    /// The band each bin belongs to.
    let owner: [Int]
    /// The centre at or below each bin, and the weight of the next one.
    let lower: [Int]
    let upperWeight: [Float]

    init(centresHz centres: [Double], binCount: Int, binHz: Double) {
        bandCount = centres.count
        let edges = zip(centres, centres.dropFirst()).map { ($0 * $1).squareRoot() }
        var owner = [Int](repeating: 0, count: binCount)
        var lower = [Int](repeating: 0, count: binCount)
        var weight = [Float](repeating: 0, count: binCount)
        for k in 0..<binCount {
            let f = Double(k) * binHz
            owner[k] = edges.firstIndex { f < $0 } ?? edges.count
            if f <= centres[0] { continue }
            if f >= centres[centres.count - 1] { lower[k] = centres.count - 1; continue }
            let i = centres.lastIndex { $0 <= f }!
            lower[k] = i
            weight[k] = Float(log(f / centres[i]) / log(centres[i + 1] / centres[i]))
        }
        self.owner = owner
        self.lower = lower
        upperWeight = weight
    }

    /// The value at bin `k` of per-band `values`.
    @inline(__always)
    func value(atBin k: Int, of values: UnsafeBufferPointer<Float>) -> Float {
        let i = lower[k], w = upperWeight[k]
        return w == 0 ? values[i] : values[i] + w * (values[i + 1] - values[i])
    }
}
