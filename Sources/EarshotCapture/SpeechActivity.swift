import Foundation

/// Where the speech is, how loud it is and how loud the room is under it.
///
/// The room tone is either given (a live check records it first) or found: the quietest tenth
/// of the frames, leaving out digital silence. Speech power per frame is what stands above the
/// room tone; the active speech level follows ITU-T P.56's idea — the mean over frames within
/// 15.9 dB of that mean, found by iteration — so pauses do not dilute it.
struct SpeechActivity {
    /// The room tone's power per bin, and in all.
    let noiseSpectrum: [Double]
    let noisePower: Double
    /// Frames that carry speech.
    let active: [Bool]
    /// The active speech level (mean square, noise removed).
    let speechPower: Double

    static let quietShare = 0.1
    static let activeMarginDB = 15.9
    /// The quietest tenth of a fluctuating room reads low: the mean of the whole room tone is
    /// this much higher, measured on recorded household noise (`make eval-soundcheck`'s tuning split).
    static let quietBiasDB = 1.0

    init(_ spectrogram: PowerSpectrogram, roomTone: Range<Int>? = nil) {
        let count = spectrogram.frames.count
        let totals = (0..<count).map { spectrogram.power($0) }
        var quiet: [Int]
        if let roomTone, !roomTone.isEmpty {
            quiet = Array(roomTone.clamped(to: 0..<count))
        } else {
            let audible = (0..<count).filter { totals[$0] > 1e-12 }
            let sorted = audible.sorted { totals[$0] < totals[$1] }
            quiet = Array(sorted.prefix(max(1, Int(Double(sorted.count) * Self.quietShare))))
        }
        let bias = roomTone == nil ? pow(10, Self.quietBiasDB / 10) : 1
        var noise = [Double](repeating: 0, count: spectrogram.binCount)
        for t in quiet {
            for k in noise.indices { noise[k] += spectrogram.frames[t][k] }
        }
        let scale = quiet.isEmpty ? 0 : bias / Double(quiet.count)
        noiseSpectrum = noise.map { $0 * scale }
        let noiseTotal = noiseSpectrum.reduce(0, +)
        noisePower = noiseTotal

        let excess = totals.map { max(0, $0 - noiseTotal) }
        var level = excess.reduce(0, +) / Double(max(1, count))
        var speech = [Bool](repeating: false, count: count)
        for _ in 0..<20 {
            let threshold = level * pow(10, -Self.activeMarginDB / 10)
            speech = excess.map { $0 > threshold && $0 > 0 }
            let n = speech.filter { $0 }.count
            guard n > 0 else { break }
            let next = zip(excess, speech).reduce(0) { $0 + ($1.1 ? $1.0 : 0) } / Double(n)
            if abs(next - level) <= 1e-6 * level { level = next; break }
            level = next
        }
        active = speech
        speechPower = speech.contains(true) ? level : 0
    }

    var activeShare: Double { Double(active.filter { $0 }.count) / Double(max(1, active.count)) }

    /// Mean power per bin over the speech frames (room tone included).
    func speechSpectrum(_ spectrogram: PowerSpectrogram) -> [Double] {
        var sum = [Double](repeating: 0, count: spectrogram.binCount)
        var n = 0
        for (t, isActive) in active.enumerated() where isActive {
            n += 1
            for k in sum.indices { sum[k] += spectrogram.frames[t][k] }
        }
        return sum.map { $0 / Double(max(1, n)) }
    }
}
