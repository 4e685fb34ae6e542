import Foundation

/// Noise reduction as a hearing aid applies it, in front of its amplification: per band of the
/// fitting, and slowly.
///
/// Each band's power is smoothed over `fastSeconds`; its noise is the floor that power keeps
/// returning to (it follows the smoothed power down at once and rises at most `riseDBPerSecond`,
/// so speech, which comes and goes within a second, never lifts it, and a steady noise sets it
/// within seconds), times `floorBias` (a minimum sits under the mean of what it tracks). The
/// band's signal-to-noise ratio over `smoothingSeconds` sets its gain by the Wiener rule,
/// √(ξ / (1 + ξ)), reducing by at most `mostReductionDB` (or the suppressor's floor, if that is
/// less). As in a hearing aid, the noise must be loud enough to matter: nothing is taken from a
/// band whose noise is under `quietDBSPL`, the whole rule applies from `loudDBSPL`. The gain
/// moves over hundreds of milliseconds, never within a syllable, and a band that carries speech
/// keeps it whole: the envelope and fine structure that amplification then makes audible are
/// the ones that came in.
///
/// The suppressor's own gains, bin by bin, changed the speech itself more than the noise they
/// removed, for listeners whose aid amplifies what is left, and in quiet too: the network takes
/// parts of soft or unfamiliar speech for noise (`make eval-amplify`). So with amplification
/// they are not computed; this is the noise reduction.
struct BandNoiseReduction {
    let layout: BandLayout
    let floor: Float
    /// Per hop: the fast and the slow smoothing, and the noise floor's most rise.
    let fast: Float
    let slow: Float
    let rise: Float
    /// dB SPL of a band power of 1, as the compressor reads levels.
    let levelOffsetDB: Float
    private var power: [Float]
    private var noise: [Float]
    private var ratio: [Float]
    private var gains: [Float]
    private var started = false

    static let fastSeconds = 0.05
    static let smoothingSeconds = 0.4
    static let riseDBPerSecond: Float = 3
    static let floorBias: Float = 1.5
    static let mostReductionDB: Float = 6
    static let quietDBSPL: Float = 35
    static let loudDBSPL: Float = 45
    /// The ratio a band starts at: a gain within 0.05 dB of 1.
    static let unheardRatio: Float = 100

    init(centresHz: [Double], binCount: Int, binHz: Double, hopSeconds: Double, floor: Float, levelOffsetDB: Float) {
        layout = BandLayout(centresHz: centresHz, binCount: binCount, binHz: binHz)
        self.floor = max(floor, powf(10, -Self.mostReductionDB / 20))
        self.levelOffsetDB = levelOffsetDB
        fast = Float(exp(-hopSeconds / Self.fastSeconds))
        slow = Float(exp(-hopSeconds / Self.smoothingSeconds))
        rise = powf(10, Self.riseDBPerSecond * Float(hopSeconds) / 10)
        let bands = centresHz.count
        power = [Float](repeating: 0, count: bands)
        noise = [Float](repeating: 0, count: bands)
        ratio = [Float](repeating: 0, count: bands)
        gains = [Float](repeating: 1, count: bands)
    }

    mutating func reset() {
        started = false
        for b in gains.indices { power[b] = 0; noise[b] = 0; ratio[b] = 0; gains[b] = 1 }
    }

    /// Sets `binGains` to the bands' slow gains for this frame of `spectrum`.
    mutating func apply(to binGains: UnsafeMutableBufferPointer<Float>, spectrum: UnsafeMutableBufferPointer<Float>) {
        let bins = min(binGains.count, spectrum.count / 2, layout.owner.count)
        // This frame's band powers, in `gains` for the moment.
        for b in gains.indices { gains[b] = 0 }
        for k in 0..<bins {
            gains[layout.owner[k]] += spectrum[2 * k] * spectrum[2 * k] + spectrum[2 * k + 1] * spectrum[2 * k + 1]
        }
        for b in gains.indices {
            let now = gains[b]
            if !started {
                power[b] = now
                noise[b] = now
            } else {
                power[b] = fast * power[b] + (1 - fast) * now
                noise[b] = min(power[b], noise[b] * rise)
            }
            let estimate = max(Self.floorBias * noise[b], 1e-30)
            let snr = max(power[b] / estimate - 1, 0)
            // Until a band has been heard, its floor is its first frame, speech as likely as
            // noise: the ratio starts where nothing is taken and comes down only as the floor
            // shows the band to be noise.
            ratio[b] = started ? slow * ratio[b] + (1 - slow) * snr : Self.unheardRatio
            let noiseDBSPL = 10 * log10f(estimate) + levelOffsetDB
            let engaged = min(1, max(0, (noiseDBSPL - Self.quietDBSPL) / (Self.loudDBSPL - Self.quietDBSPL)))
            gains[b] = powf(max(floor, (ratio[b] / (1 + ratio[b])).squareRoot()), engaged)
        }
        started = true
        gains.withUnsafeBufferPointer { gains in
            for k in 0..<bins { binGains[k] = layout.value(atBin: k, of: gains) }
        }
    }
}
