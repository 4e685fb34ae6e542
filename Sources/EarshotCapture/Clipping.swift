import Foundation

/// Clipping, hard and soft. Speech has a peaky amplitude distribution: the top tenth of its
/// range holds a handful of samples. A hard clipper piles everything above its ceiling onto it
/// (runs of equal samples); a soft one (saturation, a limiter pushed too far) squeezes the top
/// of the range without flat tops. Both show as a crowd near the peak.
struct ClippingMeasure {
    /// Share of all samples within 10 % of the peak magnitude.
    let share: Double
    /// Share of all samples in flat tops: three or more equal samples at the peak magnitude.
    let flatShare: Double

    static let nearPeak: Float = 0.9

    init(_ signal: [Float]) {
        let peak = signal.reduce(Float(0)) { max($0, abs($1)) }
        guard peak > 0, !signal.isEmpty else {
            share = 0
            flatShare = 0
            return
        }
        let near = Self.nearPeak * peak, top = peak * (1 - 1e-4)
        var nearCount = 0, flat = 0, run = 0
        for x in signal {
            let magnitude = abs(x)
            if magnitude >= near { nearCount += 1 }
            if magnitude >= top {
                run += 1
            } else {
                if run >= 3 { flat += run }
                run = 0
            }
        }
        if run >= 3 { flat += run }
        share = Double(nearCount) / Double(signal.count)
        flatShare = Double(flat) / Double(signal.count)
    }
}

/// Digital gaps: runs where the signal stops dead (exact zeros, or far below the room tone)
/// with audio on both sides, as when a driver or a link drops buffers.
struct DropoutMeasure {
    /// Gaps found, and their total length.
    let count: Int
    let seconds: Double

    static let shortestSeconds = 0.003

    init(_ signal: [Float], sampleRate: Double, noisePower: Double) {
        // 1 ms cells; a cell is dead if it is 20 dB under the room tone (or empty).
        let cell = max(1, Int(sampleRate / 1000))
        let cells = signal.count / cell
        let deadBelow = max(noisePower * 0.01, 1e-12)
        var power = [Double](repeating: 0, count: cells)
        for c in 0..<cells {
            var sum = 0.0
            for n in (c * cell)..<((c + 1) * cell) { sum += Double(signal[n]) * Double(signal[n]) }
            power[c] = sum / Double(cell)
        }
        let shortest = max(1, Int((Self.shortestSeconds * 1000).rounded()))
        let context = 20  // ms of audio either side that must be alive
        var count = 0, total = 0, c = 0
        while c < cells {
            guard power[c] < deadBelow else { c += 1; continue }
            var end = c
            while end < cells, power[end] < deadBelow { end += 1 }
            let length = end - c
            if length >= shortest, c >= context, end + context <= cells {
                let before = power[(c - context)..<c].reduce(0, +) / Double(context)
                let after = power[end..<(end + context)].reduce(0, +) / Double(context)
                // Alive on both sides: a gap inside sound, not the silence before or after it.
                if before > noisePower * 0.5, after > noisePower * 0.5 {
                    count += 1
                    total += length
                }
            }
            c = end
        }
        self.count = count
        seconds = Double(total) / 1000
    }
}
