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
/// Given the output as two bands (`limit(lower:upper:…)`), it first takes what it must from the
/// upper band alone, with the same hold, fall and release, and turns the whole down only where
/// the lower band alone would still go over: a hearing aid's output limiting, per channel, so
/// that the frequencies a sloping loss spares are not pumped by the peaks that the gain for the
/// others makes.
///
/// All memory is allocated at `init`; `limit` is real-time safe.
public final class HopLimiter {
    public let ceiling: Float
    private let hop: Int
    /// The gain of the whole output, and of the upper band where there are two.
    private let whole: LimiterGain
    private let upper: LimiterGain
    /// What is known of the next hop's sum, with the upper band's gain bound so far.
    private let aheadSum: UnsafeMutableBufferPointer<Float>

    public init(ceilingDBFS: Double, hop: Int, sampleRate: Double, holdSeconds: Double = 0.001, attackSeconds: Double = 0.002, releaseSeconds: Double = 0.05) {
        precondition(ceilingDBFS <= 0 && hop > 0, "the ceiling is at most full scale, and a hop has samples")
        ceiling = Float(Decibels.toAmplitude(ceilingDBFS))
        self.hop = hop
        let hold = max(1, Int((holdSeconds * sampleRate).rounded()))
        let attackStep = Float(1 / max(1, attackSeconds * sampleRate))
        let releaseCoefficient = Float(exp(-1 / (max(releaseSeconds, 1e-4) * sampleRate)))
        whole = LimiterGain(hop: hop, hold: hold, attackStep: attackStep, releaseCoefficient: releaseCoefficient)
        upper = LimiterGain(hop: hop, hold: hold, attackStep: attackStep, releaseCoefficient: releaseCoefficient)
        aheadSum = .allocate(capacity: hop)
        aheadSum.initialize(repeating: 0)
    }

    deinit {
        aheadSum.deallocate()
    }

    public func reset() {
        whole.reset()
        upper.reset()
    }

    /// Scales `samples` (one hop) in place; `ahead` is what is known so far of the samples after
    /// them (at most one hop).
    public func limit(_ samples: UnsafeMutableBufferPointer<Float>, ahead: UnsafeBufferPointer<Float>) {
        let count = min(samples.count, hop), known = count + min(ahead.count, hop)
        for i in 0..<known { whole.allow(i, allowance(abs(i < count ? samples[i] : ahead[i - count]))) }
        whole.update(count: count, known: known)
        for i in 0..<count { samples[i] *= whole.bound[i] }
    }

    /// Two bands of one hop: `lower` comes out as the limited sum, the upper band turned down
    /// first; `lowerAhead` and `upperAhead` are what is known so far of the next hop's bands.
    public func limit(lower: UnsafeMutableBufferPointer<Float>, upper band: UnsafeBufferPointer<Float>,
                      lowerAhead: UnsafeBufferPointer<Float>, upperAhead: UnsafeBufferPointer<Float>) {
        let count = min(lower.count, band.count, hop), known = count + min(lowerAhead.count, upperAhead.count, hop)
        for i in 0..<known {
            let (l, u) = i < count ? (lower[i], band[i]) : (lowerAhead[i - count], upperAhead[i - count])
            upper.allow(i, upperAllowance(lower: l, upper: u))
        }
        upper.update(count: count, known: known)
        for i in 0..<count { lower[i] += upper.bound[i] * band[i] }
        for i in count..<known { aheadSum[i - count] = lowerAhead[i - count] + upper.bound[i] * upperAhead[i - count] }
        limit(lower, ahead: UnsafeBufferPointer(rebasing: aheadSum[0..<(known - count)]))
    }

    /// The gain a sample of magnitude `x` may have.
    @inline(__always)
    private func allowance(_ x: Float) -> Float { x > ceiling ? ceiling / x : (x.isFinite ? 1 : 0) }

    /// The most gain the upper band may have for `lower + gain · upper` to stay under the
    /// ceiling: none where the lower band alone is over it (the whole is turned down after).
    @inline(__always)
    private func upperAllowance(lower: Float, upper: Float) -> Float {
        let sum = lower + upper
        guard sum.isFinite else { return 0 }
        guard abs(sum) > ceiling else { return 1 }
        guard abs(lower) < ceiling else { return 0 }
        // |lower + g·upper| crosses the ceiling once between g = 0 (under) and g = 1 (over), on
        // the side the sum is on.
        let target = sum > 0 ? ceiling : -ceiling
        return min(1, max(0, (target - lower) / upper))
    }
}

/// One limiter gain: what each sample may have, held, falling at a bounded rate ahead of a peak
/// and recovering after it.
private final class LimiterGain {
    private let hold: Int
    private let attackStep: Float
    private let releaseCoefficient: Float
    private var gain: Float = 1
    /// The gain each sample may have, from `hold` samples before the hop to the end of the look-ahead.
    private let allowed: UnsafeMutableBufferPointer<Float>
    /// After `update`: the gain of each of the hop's samples, then the bound over the look-ahead.
    let bound: UnsafeMutableBufferPointer<Float>

    init(hop: Int, hold: Int, attackStep: Float, releaseCoefficient: Float) {
        self.hold = hold
        self.attackStep = attackStep
        self.releaseCoefficient = releaseCoefficient
        allowed = .allocate(capacity: hold + 2 * hop)
        allowed.initialize(repeating: 1)
        bound = .allocate(capacity: 2 * hop)
        bound.initialize(repeating: 1)
    }

    deinit {
        allowed.deallocate()
        bound.deallocate()
    }

    func reset() {
        gain = 1
        allowed.update(repeating: 1)
    }

    /// Sets the gain sample `i` of the hop (or of its look-ahead, from `hop` on) may have.
    @inline(__always)
    func allow(_ i: Int, _ value: Float) { allowed[hold + i] = value }

    func update(count: Int, known: Int) {
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
            bound[i] = gain
        }
        // This hop's last `hold` to the front, for the next.
        for i in 0..<hold { allowed[i] = allowed[count + i] }
    }
}
