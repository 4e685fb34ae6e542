import EarshotCore
import Foundation

/// The alert's share of each bin of a frame: a soft mask over the spectrum's tonal peaks.
///
/// Sirens, piezo alarms, horns and chimes are tonal: their partials stand far above the
/// spectrum around them, where noise does not. A bin is a peak when it is the largest within
/// ±2 bins and at least 10 dB above the mean of the bins 3–10 away on either side; the peak
/// and its main lobe (±2 bins) go to the alert, fading in over 10–16 dB. The mask decays at
/// 0.8 per frame so a sweeping siren's partial is not chopped, and the whole mask fades in and
/// out over about 50 ms as the gate opens and closes. Its `region`, the mask widened and held
/// longer, is where the learned suppressor leaves the rest alone while the alert sounds.
struct AlertSeparation {
    private(set) var mask: [Float]
    /// Where the alert has been heard lately: the mask widened by ±`reach` bins and held with a
    /// slower decay, so a sweeping or warbling alert's sidebands and decays count too.
    private(set) var region: [Float]
    private var fresh: [Float]
    private var power: [Float]
    private var prefix: [Double]
    private var level: Float = 0
    /// Whether `mask` may hold anything: once the gate has closed and the fade is over, the
    /// mask is cleared, so one alert's peaks never open the next alert's first frames.
    private var holdsMask = false

    static let decay: Float = 0.8
    static let fadeFrames: Float = 12
    static let near = 2, far = 10
    /// ±16 bins (±500 Hz) held at 0.98 per frame (about 200 ms): chosen on the development
    /// alert clips of `make eval-detect` (docs/speech-enhancement.md).
    static let reach = 16
    static let regionDecay: Float = 0.98

    init(bins: Int) {
        mask = [Float](repeating: 0, count: bins)
        region = [Float](repeating: 0, count: bins)
        fresh = [Float](repeating: 0, count: bins)
        power = [Float](repeating: 0, count: bins)
        prefix = [Double](repeating: 0, count: bins + 1)
    }

    mutating func reset() {
        for i in mask.indices { mask[i] = 0; region[i] = 0 }
        level = 0
        holdsMask = false
    }

    /// Updates the mask from this frame's spectrum (interleaved re, im); false while the gate
    /// is closed and the mask has faded out (nothing to separate).
    mutating func update(spectrum: UnsafeMutableBufferPointer<Float>, open: Bool) -> Bool {
        level = open ? min(1, level + 1 / Self.fadeFrames) : max(0, level - 1 / Self.fadeFrames)
        guard level > 0 else {
            if holdsMask { reset() }
            return false
        }
        holdsMask = true
        let bins = mask.count
        for k in 0..<bins {
            power[k] = spectrum[2 * k] * spectrum[2 * k] + spectrum[2 * k + 1] * spectrum[2 * k + 1]
            prefix[k + 1] = prefix[k] + Double(power[k])
            fresh[k] = 0
        }
        let near = Self.near, far = Self.far
        for k in 0..<bins {
            let p = power[k]
            guard p > 0 else { continue }
            var isPeak = true
            for j in max(0, k - near)...min(bins - 1, k + near) where power[j] > p { isPeak = false; break }
            guard isPeak else { continue }
            // Mean of the flanks, 3…10 bins away on both sides.
            let lowSum = prefix[max(0, k - near)] - prefix[max(0, k - far)]
            let highSum = prefix[min(bins, k + far + 1)] - prefix[min(bins, k + near + 1)]
            let flankCount = (max(0, k - near) - max(0, k - far)) + (min(bins, k + far + 1) - min(bins, k + near + 1))
            guard flankCount > 0 else { continue }
            let flank = Float((lowSum + highSum) / Double(flankCount))
            let contrastDB = 10 * log10f(p / max(flank, 1e-30))
            let share = min(1, max(0, (contrastDB - 10) / 6))
            guard share > 0 else { continue }
            for j in max(0, k - near)...min(bins - 1, k + near) { fresh[j] = max(fresh[j], share) }
        }
        for k in 0..<bins {
            mask[k] = max(fresh[k] * level, mask[k] * Self.decay)
        }
        let reach = Self.reach
        for k in 0..<bins {
            var widest: Float = 0
            for j in max(0, k - reach)...min(bins - 1, k + reach) { widest = max(widest, mask[j]) }
            region[k] = max(widest, region[k] * Self.regionDecay)
        }
        return true
    }
}
