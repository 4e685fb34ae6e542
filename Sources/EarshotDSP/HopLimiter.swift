import Foundation

/// A peak limiter for the output of a low-delay STFT, which knows each hop before it plays.
///
/// When a frame is synthesised, the next `hop` output samples are final and the `hop` after
/// them are known in part (this frame's share of them): a look-ahead of up to two hops, paid for
/// by the delay the STFT already has. The gain each sample may have is what keeps it under the
/// ceiling; it is held at the lowest such gain for `holdSeconds` either side of a peak, so a
/// peak keeps its shape (never a flat top, as a clip or a sample-by-sample guard leaves), falls
/// towards it at most `1 / attackSeconds` per second, ahead of the peak, and recovers over
/// `releaseSeconds`. Within the hop the bound is exact; the next hop's share from later frames is
/// not yet known, so a peak there can still need a faster fall at the hop's start.
///
/// All memory is allocated at `init`; `limit` is real-time safe.
public final class HopLimiter {
    public let ceiling: Float
    private let hop: Int
    private let hold: Int
    private let attackStep: Float
    private let releaseCoefficient: Float
    private var gain: Float = 1
    /// The gain each sample may have, from `hold` samples before the hop to the end of the look-ahead.
    private let allowed: UnsafeMutableBufferPointer<Float>
    /// The held, then fall-limited, gain over the hop and its look-ahead.
    private let bound: UnsafeMutableBufferPointer<Float>

    public init(ceilingDBFS: Double, hop: Int, sampleRate: Double, holdSeconds: Double = 0.001, attackSeconds: Double = 0.002, releaseSeconds: Double = 0.05) {
        precondition(ceilingDBFS <= 0 && hop > 0, "the ceiling is at most full scale, and a hop has samples")
        ceiling = Float(Decibels.toAmplitude(ceilingDBFS))
        self.hop = hop
        hold = max(1, Int((holdSeconds * sampleRate).rounded()))
        attackStep = Float(1 / max(1, attackSeconds * sampleRate))
        releaseCoefficient = Float(exp(-1 / (max(releaseSeconds, 1e-4) * sampleRate)))
        allowed = .allocate(capacity: hold + 2 * hop)
        allowed.initialize(repeating: 1)
        bound = .allocate(capacity: 2 * hop)
        bound.initialize(repeating: 1)
    }

    deinit {
        allowed.deallocate()
        bound.deallocate()
    }

    public func reset() {
        gain = 1
        allowed.update(repeating: 1)
    }

    /// Scales `samples` (one hop) in place; `ahead` is what is known so far of the samples after
    /// them (at most one hop).
    public func limit(_ samples: UnsafeMutableBufferPointer<Float>, ahead: UnsafeBufferPointer<Float>) {
        let count = min(samples.count, hop), known = count + min(ahead.count, hop)
        for i in 0..<known {
            let x = abs(i < count ? samples[i] : ahead[i - count])
            allowed[hold + i] = x > ceiling ? ceiling / x : (x.isFinite ? 1 : 0)
        }
        // Held: the least allowed within `hold` samples either side (the previous hop's last
        // `hold` are at the front).
        for i in 0..<known {
            var least: Float = 1
            for j in i...min(hold + known - 1, i + 2 * hold) { least = min(least, allowed[j]) }
            bound[i] = least
        }
        for i in stride(from: known - 2, through: 0, by: -1) { bound[i] = min(bound[i], bound[i + 1] + attackStep) }
        for i in 0..<count {
            gain = min(bound[i], 1 - (1 - gain) * releaseCoefficient)
            samples[i] *= gain
        }
        // This hop's last `hold` to the front, for the next.
        for i in 0..<hold { allowed[i] = allowed[count + i] }
    }
}
