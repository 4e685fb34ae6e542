import Foundation

/// Clipping, hard and soft: only where the waveform itself was cut. A hard clipper holds every
/// sample above its ceiling at the ceiling (flat tops); a soft one (an overdriven input's
/// saturating curve) rounds every loud cycle. A limiter that keeps a loud recording under full
/// scale does neither, and is not clipping (too loud is its own finding).
struct ClippingMeasure {
    /// Hard clipping: the share of the speech's samples in flat tops, three or more samples in a
    /// row held at one level near either polarity's extreme.
    let flatShare: Double
    /// Soft clipping: the share of the loudest peaks (the local maxima of the top 0.5 % of
    /// samples) whose ±5 ms around them is nearly as loud as the peak itself — crest factor under
    /// 1.5, a squeezed, rounded top (a sine's is 1.41, a voice's 2–3). A limiter lowers whole
    /// syllables and leaves each cycle's shape; a saturating input rounds every cycle it drives.
    let roundedShare: Double

    static let nearExtreme: Float = 0.9
    /// Consecutive samples this close (relative to the peak) are one level: a flat top.
    static let still: Float = 2e-5
    static let roundedCrest: Float = 1.5

    init(_ signal: [Float], sampleRate: Double) {
        let peak = signal.reduce(Float(0)) { max($0, abs($1)) }
        guard peak > 0, signal.count > 2 else {
            flatShare = 0
            roundedShare = 0
            return
        }
        flatShare = Double(Self.flatSamples(signal, peak: peak)) / Double(max(1, Self.speechSamples(signal, sampleRate: sampleRate)))
        roundedShare = Self.roundedPeakShare(signal, peak: peak, sampleRate: sampleRate)
    }

    /// Samples in runs held at one level near the positive or the negative extreme.
    static func flatSamples(_ signal: [Float], peak: Float) -> Int {
        var total = 0
        for sign: Float in [1, -1] {
            let top = signal.reduce(-Float.infinity) { max($0, sign * $1) }
            guard top > 0 else { continue }
            let near = nearExtreme * top, tolerance = still * peak
            var run = 0  // steps in a row that stayed at one level
            for n in 1..<signal.count {
                let a = sign * signal[n - 1], b = sign * signal[n]
                if a >= near, b >= near, abs(b - a) <= tolerance {
                    run += 1
                } else {
                    if run >= 2 { total += run + 1 }
                    run = 0
                }
            }
            if run >= 2 { total += run + 1 }
        }
        return total
    }

    /// Samples in 10 ms frames within 15.9 dB of their mean power (ITU-T P.56's active frames).
    static func speechSamples(_ signal: [Float], sampleRate: Double) -> Int {
        let frame = max(1, Int(sampleRate / 100))
        let powers = SpeechActivity.tenMillisecondPowers(signal, sampleRate: sampleRate)
        guard !powers.isEmpty else { return signal.count }
        var level = powers.reduce(0, +) / Double(powers.count)
        var active = powers.count
        for _ in 0..<20 {
            let floor = level * pow(10, -1.59)
            let kept = powers.filter { $0 > floor }
            guard !kept.isEmpty else { break }
            level = kept.reduce(0, +) / Double(kept.count)
            active = kept.count
        }
        return active * frame
    }

    static func roundedPeakShare(_ signal: [Float], peak: Float, sampleRate: Double) -> Double {
        // The 99.5th percentile of |x|, from a histogram of 4096 steps of the peak.
        let bins = 4096
        var histogram = [Int](repeating: 0, count: bins)
        for x in signal { histogram[min(bins - 1, Int(abs(x) / peak * Float(bins)))] += 1 }
        var above = 0, bin = bins
        let wanted = max(1, signal.count / 200)
        while bin > 0 && above < wanted {
            bin -= 1
            above += histogram[bin]
        }
        let loud = Float(bin) / Float(bins) * peak
        let around = max(1, Int(0.005 * sampleRate)), apart = max(1, Int(0.002 * sampleRate))
        var peaks = 0, rounded = 0
        for n in signal.indices where abs(signal[n]) >= loud && abs(signal[n]) > 0 {
            let magnitude = abs(signal[n])
            let lo = max(0, n - apart), hi = min(signal.count - 1, n + apart)
            var isPeak = true
            for m in lo...hi where abs(signal[m]) > magnitude || (abs(signal[m]) == magnitude && m < n) {
                isPeak = false
                break
            }
            guard isPeak else { continue }
            let from = max(0, n - around), to = min(signal.count - 1, n + around)
            var energy: Float = 0
            for m in from...to { energy += signal[m] * signal[m] }
            let rms = (energy / Float(to - from + 1)).squareRoot()
            peaks += 1
            if magnitude < roundedCrest * rms { rounded += 1 }
        }
        return peaks == 0 ? 0 : Double(rounded) / Double(peaks)
    }
}

/// Digital gaps: the signal stops dead (digital silence, a flat line) in the middle of speech and comes back,
/// as when a driver or a wireless link drops buffers. A noise gate's silences fall in pauses and
/// last longer; a dropout has sound on both sides, speech on at least one, and lasts a few buffers.
/// (Digital silence spliced between two takes, where a breath or a tail fades into it, is an edit.)
struct DropoutMeasure {
    /// Gaps found, and their total length.
    let count: Int
    let seconds: Double

    static let shortestSeconds = 0.003
    static let longestSeconds = 0.25
    /// Within this many dB of the active speech level on both sides,
    static let contextBelowSpeechDB = 25.0
    /// and within this many on one: a word or a consonant cut off or cut into.
    static let cutBelowSpeechDB = 15.0
    /// A sample this small is silence: under one step of 16-bit audio.
    static let silent: Float = 1.0 / 32_768

    init(_ signal: [Float], sampleRate: Double, speechPower: Double) {
        let shortest = max(1, Int(Self.shortestSeconds * sampleRate)), longest = Int(Self.longestSeconds * sampleRate)
        // A dropout cuts the sound off mid-flight: the few milliseconds either side are loud. (A
        // gate or a pause fades out first.)
        let context = max(1, Int(0.003 * sampleRate))
        let alive = speechPower * pow(10, -Self.contextBelowSpeechDB / 10)
        let cut = speechPower * pow(10, -Self.cutBelowSpeechDB / 10)
        func power(_ range: Range<Int>) -> Double {
            range.reduce(0.0) { $0 + Double(signal[$1]) * Double(signal[$1]) } / Double(max(1, range.count))
        }
        var count = 0, total = 0
        for run in Self.held(signal) {
            let (n, end) = (run.lowerBound, run.upperBound), length = run.count
            if length >= shortest, length <= longest, n >= context, end + context <= signal.count, speechPower > 0 {
                let before = power((n - context)..<n), after = power(end..<(end + context))
                if min(before, after) >= alive, max(before, after) >= cut {
                    count += 1
                    total += length
                }
            }
        }
        self.count = count
        seconds = Double(total) / sampleRate
    }

    /// Every run of at least two samples of silence, or of a flat line near it (a DC offset
    /// added after the gap).
    static func held(_ signal: [Float]) -> [Range<Int>] {
        var runs: [Range<Int>] = [], n = 0
        while n < signal.count {
            let level = signal[n]
            guard abs(level) < 0.05, n + 1 < signal.count, abs(signal[n + 1] - level) <= silent else { n += 1; continue }
            var end = n
            while end < signal.count, abs(signal[end] - level) <= silent { end += 1 }
            runs.append(n..<end)
            n = end
        }
        return runs
    }
}
