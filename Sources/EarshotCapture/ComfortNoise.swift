import Foundation

/// Comfort noise for an echo suppressor: where a bin was lowered under the room's own noise, that
/// noise is filled back in (at `levelDB` relative to it, with a random phase, and never above what
/// reached the suppressor), so the background does not drop out each time the far end talks and
/// return when it stops. Telephone echo cancellers have done this since ITU-T G.168: a room that
/// comes and goes with the far end is itself heard as echo.
///
/// The room's noise in a bin is the floor that the power of what reached the suppressor keeps
/// returning to: that power smoothed over `smoothingSeconds`, followed down at once and up by at
/// most `riseDBPerSecond`, and up only while the bin's echo estimate is faint (speech comes and
/// goes within a second and never lifts it; a residual echo that stays would), raised by
/// `floorBiasDB`, about how far such a floor sits under a steady noise's mean.
/// Nothing allocates after `init`; the same frames give the same noise from every `reset`.
struct ComfortNoise {
    static let smoothingSeconds = 0.05
    static let riseDBPerSecond: Float = 1
    /// Measured on white noise at 16 kHz with the canceller's 5 ms frames (`EchoCancellerTests`'
    /// comfort noise test), with a floor rising 3 dB/s everywhere: filled to the bare floor, the
    /// suppressed stretch came out 5.6 dB under the room alone. As it is now, at 0 dB, 4.9 dB under.
    static let floorBiasDB = 5.0
    /// Unit phasors the noise's phase is drawn from (more than any ear tells apart).
    static let phases = 1024

    let level: Float
    private let fast: Float, rise: Float
    private var power: [Float], floor: [Float]
    private let phasors: [Float]
    private var seed: UInt32 = 1
    private var started = false

    init(bins: Int, levelDB: Double, hopSeconds: Double) {
        level = Float(pow(10, (levelDB + Self.floorBiasDB) / 10))
        fast = Float(exp(-hopSeconds / Self.smoothingSeconds))
        rise = powf(10, Self.riseDBPerSecond * Float(hopSeconds) / 10)
        power = [Float](repeating: 0, count: bins)
        floor = [Float](repeating: 0, count: bins)
        phasors = (0..<(2 * Self.phases)).map { i in
            let angle = 2 * Double.pi * Double(i / 2) / Double(Self.phases)
            return Float(i % 2 == 0 ? cos(angle) : sin(angle))
        }
    }

    mutating func reset() {
        started = false
        seed = 1
        for k in power.indices { power[k] = 0; floor[k] = 0 }
    }

    /// Marks the end of a frame: from the next one on, floors follow rather than start.
    mutating func endFrame() { started = true }

    /// Follows bin `k`'s noise in `passed` (the power that reached the suppressor this frame;
    /// its floor rises only where `echoFree`, so a residual echo is never taken for the room) and
    /// adds to the suppressor's output (`re`, `im`) the noise it lacks under that floor.
    mutating func fill(_ k: Int, passed: Float, echoFree: Bool, re: inout Float, im: inout Float) {
        if started {
            power[k] = fast * power[k] + (1 - fast) * passed
            floor[k] = min(echoFree ? max(floor[k], EchoCanceller.tiny) * rise : floor[k], power[k])
        } else {
            power[k] = passed
            floor[k] = passed
        }
        // Never more than the suppressor took: where it took nothing, nothing is added.
        let kept = re * re + im * im
        let missing = min(level * floor[k], passed) - kept
        guard missing > 0 else { return }
        // A linear congruential step (Numerical Recipes' constants): cheap, and the same every run.
        seed = seed &* 1_664_525 &+ 1_013_904_223
        let phase = 2 * Int(seed >> 22)  // the top 10 bits: one of the 1024 phasors
        let magnitude = missing.squareRoot()
        re += magnitude * phasors[phase]
        im += magnitude * phasors[phase + 1]
    }
}
