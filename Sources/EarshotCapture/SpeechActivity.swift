import EarshotCore
import Foundation

/// Where the speech is, how loud it is and how loud the room is under it.
///
/// The room tone is given (a live check records it first), or the mean over the talker's pauses
/// (`PauseDetector`: bursts of noise between the words count, as a listener hears them; the
/// sure ones, or where too few are sure, the likely ones; outside a ringing room with the short,
/// less certain stretches inside a pause), or, where too few pauses are found, each bin's low
/// percentile over the recording (digital silence left out); with the bursts under the words
/// added, which the pauses cannot hear (`withBurstsUnderWords`). Speech power per
/// frame is what stands above the room tone; the active speech level follows ITU-T P.56's idea
/// — the mean over frames within 15.9 dB of that mean, found by iteration — so pauses do not
/// dilute it.
struct SpeechActivity {
    /// The room tone's power per bin, and in all.
    let noiseSpectrum: [Double]
    let noisePower: Double
    /// Its steady part per bin: the low percentile (or the given room tone), which is what fills
    /// a room's decays; bursts between the words lie above it.
    let floorSpectrum: [Double]
    /// Frames that carry speech.
    let active: [Bool]
    /// The active speech level (mean square, noise removed).
    let speechPower: Double

    static let activeMarginDB = 15.9
    /// Each bin's room tone is a low percentile of its (smoothed) power over time: even in
    /// continuous speech every bin has moments between harmonics, words and syllables where only
    /// the room is heard.
    static let quietPercentile = 0.1
    /// The percentile reads under the mean of a fluctuating room tone by this much (set on the
    /// recorded household noise of `make eval-soundcheck`'s tuning split).
    static let quietBiasDB = 3.0
    /// In a reverberant room the quiet between words is mostly decaying tails, and a few longer
    /// pauses fall well under them to the room tone itself. Where the 2nd percentile lies this far
    /// under the 10th (a steady room tone keeps them within about 3 dB), the 2nd is the room
    /// tone (set on the tuning split, between its noisy and its reverberant recordings).
    static let tailPercentile = 0.02
    static let tailSpreadDB = 6.0
    /// Only a room that rings has tails: elsewhere the same spread is a noise that comes and goes
    /// (a door, typing, a passing car), and its gaps are not the room tone. The measured RT60 at
    /// or above which the quiet between words is taken for tails (set on the tuning split: the
    /// highest line that keeps its macro-F1).
    static let ringingRT60Seconds = 0.4

    /// The room tone per bin, from the recording itself; `roomRings`: the quiet between words may
    /// be a reverberant room's tails.
    static func roomTone(_ spectrogram: PowerSpectrogram, audible: [Bool], roomRings: Bool) -> [Double] {
        let frames = spectrogram.frames, bins = spectrogram.binCount
        let kept = frames.indices.filter { audible[$0] }
        guard !kept.isEmpty else { return [Double](repeating: 0, count: bins) }
        let bias = pow(10, quietBiasDB / 10)
        var column = [Double](repeating: 0, count: kept.count)
        var quiet = [Double](repeating: 0, count: bins), quieter = [Double](repeating: 0, count: bins)
        for k in 0..<bins {
            // Smoothed over three bins and five frames, so the percentile reads a steadier estimate.
            for j in kept.indices {
                var sum = 0.0, n = 0.0
                for dt in -2...2 where kept.indices.contains(j + dt) {
                    let row = frames[kept[j + dt]]
                    for dk in -1...1 where (0..<bins).contains(k + dk) {
                        sum += row[k + dk]
                        n += 1
                    }
                }
                column[j] = sum / n
            }
            column.sort()
            quiet[k] = column[Int(Double(column.count - 1) * quietPercentile)] * bias
            quieter[k] = column[Int(Double(column.count - 1) * tailPercentile)] * bias
        }
        let spread = Level.dB(power: quiet.reduce(0, +)) - Level.dB(power: quieter.reduce(0, +))
        return roomRings && spread > tailSpreadDB ? quieter : quiet
    }

    /// Pauses are needed over at least this long for their mean to be the noise's: with fewer
    /// sure frames, a reverberant room's tails taken for pauses can outweigh the noise.
    static let leastPauseSeconds = 0.5
    /// Where fewer are sure, the likely pauses stand in if they last at least this long: a short
    /// stretch of them in a clean recording read without a stop is mostly the talker's breaths
    /// and decays.
    static let leastLikelyPauseSeconds = 1.0

    /// `pauses`: the talker's pauses in 10 ms frames from the recording's start; `rt60Seconds`:
    /// the room's measured reverberation time, where it could be measured; `pausesHeard` and
    /// `burstsHeard`: the frames of `spectrogram` the pauses and the bursts under the words may
    /// be read in (all where empty; not beside a dropout's gap); `shareAlone`: whether the share
    /// network may find a burst on its own (not where clipping, an echo or a ringing room was
    /// measured, whose distortion, copy and tails sound like noise to it).
    init(_ spectrogram: PowerSpectrogram, roomTone: Range<Int>? = nil, pauses: PauseDetector.Pauses? = nil, rt60Seconds: Double? = nil,
         pausesHeard: [Bool] = [], burstsHeard: [Bool] = [], shareAlone: Bool = false) {
        let count = spectrogram.frames.count
        let totals = (0..<count).map { spectrogram.power($0) }
        let given = roomTone.map { Array($0.clamped(to: 0..<count)) } ?? []
        if !given.isEmpty {
            noiseSpectrum = spectrogram.mean(of: given)
            floorSpectrum = noiseSpectrum
        } else {
            let roomRings = (rt60Seconds ?? 0) >= Self.ringingRT60Seconds
            let audible = totals.map { $0 > 1e-12 }
            floorSpectrum = Self.roomTone(spectrogram, audible: audible, roomRings: roomRings)
            // The pauses are counted in 10 ms frames from the start, as the spectrogram's are.
            let scale = spectrogram.hopSeconds / PauseDetector.hopSeconds
            let pauseFrame = (0..<count).map { Int((Double($0) * scale).rounded()) }
            func frames(_ marks: [Bool], atLeast seconds: Double) -> [Int]? {
                let chosen = marks.isEmpty ? [] : (0..<count).filter { t in
                    audible[t] && marks[min(marks.count - 1, pauseFrame[t])] && (t >= pausesHeard.count || pausesHeard[t])
                }
                return Double(chosen.count) * spectrogram.hopSeconds >= seconds ? chosen : nil
            }
            // Bursts inside a pause are the noise's, but in a room that rings that is its tail.
            let paused = (roomRings ? pauses : pauses?.bridged()).flatMap {
                frames($0.sure, atLeast: Self.leastPauseSeconds) ?? frames($0.likely, atLeast: Self.leastLikelyPauseSeconds)
            }
            let between = paused.map { spectrogram.mean(of: $0) } ?? floorSpectrum
            noiseSpectrum = pauses.map {
                Self.withBurstsUnderWords(between, spectrogram, audible: audible, pauses: $0, pauseFrame: pauseFrame, counted: paused ?? [],
                                          heard: burstsHeard, shareAlone: shareAlone && !roomRings)
            } ?? between
        }
        let noiseTotal = noiseSpectrum.reduce(0, +)
        noisePower = noiseTotal

        let excess = totals.map { max(0, $0 - noiseTotal) }
        let level = Self.activeLevel(excess)
        active = excess.map { $0 > level * pow(10, -Self.activeMarginDB / 10) && $0 > 0 }
        speechPower = level
    }

    /// `between` (the noise between the words, per bin) with the bursts under the words added:
    /// `audible` frames outside the `counted` pauses that the share network judges mostly noise
    /// and the pause network at least possibly a pause (`pauses` in its own frames, the one of
    /// each spectrogram frame at `pauseFrame`), each adding what its noise (its share of the
    /// frame) holds over `between`, over every audible frame. A knock or a shot that lands on a
    /// word is noise all the same; the pauses alone read it as quiet. Both networks must agree
    /// unless the share network is sure: at even odds it also takes a long unvoiced sound of
    /// the talker's for a burst. Sure, it decides alone only where `shareAlone`, only for a
    /// frame about as loud as the talker, and not where the talker is too loud: a limiter's or
    /// a clipper's squeezed syllables sound like noise to it. Only the frames `heard` marks
    /// count (all where it is empty).
    static func withBurstsUnderWords(_ between: [Double], _ spectrogram: PowerSpectrogram, audible: [Bool], pauses: PauseDetector.Pauses,
                                     pauseFrame: [Int], counted: [Int], heard: [Bool] = [], shareAlone: Bool = false) -> [Double] {
        let audibleCount = audible.filter { $0 }.count
        guard audibleCount > 0, !pauses.noiseShare.isEmpty, !pauses.possible.isEmpty else { return between }
        let inPauses = Set(counted)
        let talker = activeLevel(audible.indices.map { audible[$0] ? spectrogram.power($0) : 0 })
        let alone = shareAlone && Level.dB(power: talker) < SoundCheck.Threshold.tooLoudDBFS
        let loud = talker * pow(10, -sureBurstUnderTalkerDB / 10)
        var added = [Double](repeating: 0, count: between.count)
        for t in audible.indices where audible[t] && !inPauses.contains(t) && (t >= heard.count || heard[t]) {
            let u = min(pauses.noiseShare.count - 1, pauseFrame[t])
            let share = pauses.noiseShare[u]
            let sure = alone && share >= sureBurstShare && spectrogram.power(t) >= loud
            guard share >= leastBurstShare, sure || pauses.possible[min(pauses.possible.count - 1, u)] else { continue }
            for k in added.indices { added[k] += max(0, share * spectrogram.frames[t][k] - between[k]) }
        }
        return zip(between, added).map { $0 + $1 / Double(audibleCount) }
    }

    /// The noise's share over which a frame under the words counts as a burst (set on the
    /// tuning material of `make eval-soundcheck`: 0.5 and 0.8 read it alike).
    static let leastBurstShare = 0.5
    /// The share over which the share network alone decides, whatever the pause network says: a
    /// bang on a word is loud enough to make the frame the talker's to it. Chosen among 0.5, 0.7
    /// and 0.9 on the tuning material (its set and the knocks and bangs of `eval/soundcheck/snr.py`):
    /// the least SNR error on the bangs that calls no more of the tuning set's recordings noisy
    /// (0.5 calls two more).
    static let sureBurstShare = 0.7
    /// Alone, it decides only in frames at most this far under the whole recording's active
    /// level: a burst that moves the SNR is that loud (97 % of the bangs' power on the tuning
    /// material lies in such frames), while a talker's long unvoiced sounds lie well under the
    /// vowels (a synthetic talker's noise-like syllables, 5–16 dB under).
    static let sureBurstUnderTalkerDB = 3.0

    /// The mean square of each whole 10 ms frame of `signal`: the frames ITU-T P.56 counts in.
    static func tenMillisecondPowers(_ signal: [Float], sampleRate: Double) -> [Double] {
        let frame = max(1, Int(sampleRate / 100))
        return stride(from: 0, to: signal.count - frame + 1, by: frame).map { start in
            signal[start..<(start + frame)].reduce(0.0) { $0 + Double($1) * Double($1) } / Double(frame)
        }
    }

    /// The active level of frame powers (noise removed): the mean over the frames within
    /// `activeMarginDB` of that mean, found by iteration; 0 where nothing is active.
    static func activeLevel(_ excess: [Double]) -> Double {
        var level = excess.reduce(0, +) / Double(max(1, excess.count))
        for _ in 0..<20 {
            let threshold = level * pow(10, -activeMarginDB / 10)
            var sum = 0.0, n = 0
            for power in excess where power > threshold && power > 0 {
                sum += power
                n += 1
            }
            guard n > 0 else { return 0 }
            let next = sum / Double(n)
            if abs(next - level) <= 1e-6 * level { return next }
            level = next
        }
        return level
    }

    /// Mean power per bin over the speech frames (room tone included); with `trimmedShare`, each
    /// bin's loudest frames in that share are left out.
    func speechSpectrum(_ spectrogram: PowerSpectrogram, trimmedShare: Double = 0) -> [Double] {
        let frames = active.indices.filter { active[$0] }
        guard !frames.isEmpty else { return [Double](repeating: 0, count: spectrogram.binCount) }
        let kept = max(1, frames.count - Int(Double(frames.count) * trimmedShare))
        var column = [Double](repeating: 0, count: frames.count)
        return (0..<spectrogram.binCount).map { k in
            for (j, t) in frames.enumerated() { column[j] = spectrogram.frames[t][k] }
            if kept < column.count { column.sort() }
            return column[0..<kept].reduce(0, +) / Double(kept)
        }
    }
}
