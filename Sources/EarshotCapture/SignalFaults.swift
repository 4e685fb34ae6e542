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

/// Digital gaps: the signal stops dead (digital silence, a flat line) in the middle of speech and comes back,
/// as when a driver or a wireless link drops buffers. A noise gate's silences fall in pauses and
/// last longer; a dropout has speech on both sides and lasts a few buffers.
struct DropoutMeasure {
    /// Gaps found, and their total length.
    let count: Int
    let seconds: Double

    static let shortestSeconds = 0.003
    static let longestSeconds = 0.25
    /// Within this many dB of the active speech level on both sides.
    static let contextBelowSpeechDB = 25.0
    /// A sample this small is silence: under one step of 16-bit audio.
    static let silent: Float = 1.0 / 32_768

    init(_ signal: [Float], sampleRate: Double, speechPower: Double) {
        let shortest = max(1, Int(Self.shortestSeconds * sampleRate)), longest = Int(Self.longestSeconds * sampleRate)
        // A dropout cuts the sound off mid-flight: the few milliseconds either side are loud. (A
        // gate or a pause fades out first.)
        let context = max(1, Int(0.003 * sampleRate))
        let alive = speechPower * pow(10, -Self.contextBelowSpeechDB / 10)
        func power(_ range: Range<Int>) -> Double {
            range.reduce(0.0) { $0 + Double(signal[$1]) * Double(signal[$1]) } / Double(max(1, range.count))
        }
        var count = 0, total = 0, n = 0
        // Silence, or a flat line near it (a DC offset added after the gap).
        while n < signal.count {
            let held = signal[n]
            guard abs(held) < 0.05, n + 1 < signal.count, abs(signal[n + 1] - held) <= Self.silent else { n += 1; continue }
            var end = n
            while end < signal.count, abs(signal[end] - held) <= Self.silent { end += 1 }
            let length = end - n
            if length >= shortest, length <= longest, n >= context, end + context <= signal.count, speechPower > 0,
                power((n - context)..<n) >= alive, power(end..<(end + context)) >= alive
            {
                count += 1
                total += length
            }
            n = end
        }
        self.count = count
        seconds = Double(total) / sampleRate
    }
}
