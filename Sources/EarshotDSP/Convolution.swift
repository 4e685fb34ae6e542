import EarshotCore
import Foundation

/// Offline linear convolution by FFT, for signals of any length.
public enum Convolution {
    /// The full linear convolution of `x` and `h` (length x.count + h.count − 1).
    ///
    /// One FFT over the whole output when the two are of similar length; overlap-add with
    /// FFTs a few times the shorter signal when one is much longer — whichever the cost model
    /// (N log N per transform) says is cheaper.
    public static func convolve(_ x: [Float], _ h: [Float]) -> [Float] {
        guard !x.isEmpty, !h.isEmpty else { return [] }
        let (long, short) = x.count >= h.count ? (x, h) : (h, x)
        let outputCount = long.count + short.count - 1
        if short.count <= 32 { return direct(long, short) }
        let single = RealFFT.fastSize(atLeast: outputCount)
        let block = RealFFT.fastSize(atLeast: 4 * short.count)
        let step = block - short.count + 1
        let blocks = (long.count + step - 1) / step
        if cost(single) * 3 <= cost(block) * Double(2 * blocks + 1) {
            return singleTransform(long, short, size: single)
        }
        return overlapAdd(long, short, size: block)
    }

    private static func cost(_ n: Int) -> Double { Double(n) * log2(Double(max(n, 2))) }

    private static func direct(_ x: [Float], _ h: [Float]) -> [Float] {
        var y = [Float](repeating: 0, count: x.count + h.count - 1)
        for (j, hj) in h.enumerated() where hj != 0 {
            for i in x.indices { y[i + j] += x[i] * hj }
        }
        return y
    }

    private static func singleTransform(_ x: [Float], _ h: [Float], size: Int) -> [Float] {
        // Three transforms: measuring plans would cost more than it saves.
        let fft = RealFFT(size: size, planning: .estimate)
        let hSpectrum = spectrum(of: h, using: fft)
        load(x, into: fft)
        fft.forward()
        multiply(fft.spectrum, by: hSpectrum)
        fft.inverse()
        return Array(fft.time[0..<(x.count + h.count - 1)])
    }

    private static func overlapAdd(_ x: [Float], _ h: [Float], size: Int) -> [Float] {
        let step = size - h.count + 1
        // Measured plans pay for themselves only over many blocks.
        let fft = RealFFT(size: size, planning: (x.count + step - 1) / step >= 64 ? .suited(to: size) : .estimate)
        let hSpectrum = spectrum(of: h, using: fft)
        var y = [Float](repeating: 0, count: x.count + h.count - 1)
        var start = 0
        while start < x.count {
            let count = min(step, x.count - start)
            fft.time.update(repeating: 0)
            x.withUnsafeBufferPointer { fft.time.baseAddress!.update(from: $0.baseAddress! + start, count: count) }
            fft.forward()
            multiply(fft.spectrum, by: hSpectrum)
            fft.inverse()
            let produced = min(count + h.count - 1, y.count - start)
            for i in 0..<produced { y[start + i] += fft.time[i] }
            start += step
        }
        return y
    }

    public static func load(_ signal: [Float], into fft: RealFFT) {
        fft.time.update(repeating: 0)
        signal.withUnsafeBufferPointer { fft.time.baseAddress!.update(from: $0.baseAddress!, count: min($0.count, fft.size)) }
    }

    /// The FFT of `signal`, zero-padded to the transform size, interleaved (re, im).
    public static func spectrum(of signal: [Float], using fft: RealFFT) -> [Float] {
        load(signal, into: fft)
        fft.forward()
        return Array(fft.spectrum)
    }

    /// Complex multiply, interleaved (re, im) pairs, in place.
    public static func multiply(_ a: UnsafeMutableBufferPointer<Float>, by b: [Float]) {
        b.withUnsafeBufferPointer { b in
            for k in stride(from: 0, to: a.count, by: 2) {
                let re = a[k] * b[k] - a[k + 1] * b[k + 1]
                let im = a[k] * b[k + 1] + a[k + 1] * b[k]
                a[k] = re
                a[k + 1] = im
            }
        }
    }

    /// Convolves every channel pair: equal counts pair up, a mono side is shared by every
    /// channel of the other (mono × stereo → stereo).
    public static func convolve(channels x: [[Float]], with h: [[Float]]) throws -> [[Float]] {
        let count = try outputChannelCount(x.count, h.count)
        return (0..<count).map { c in convolve(x[x.count == 1 ? 0 : c], h[h.count == 1 ? 0 : c]) }
    }

    /// How many channels a convolution of `a` and `b` channels yields, or why it cannot be done.
    public static func outputChannelCount(_ a: Int, _ b: Int) throws -> Int {
        guard a >= 1, b >= 1 else { throw EarshotError.invalidChannelCount(min(a, b)) }
        guard a == b || a == 1 || b == 1 else {
            throw DSPError.cannotConvolve(channels: a, with: b)
        }
        return max(a, b)
    }
}
