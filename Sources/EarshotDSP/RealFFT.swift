import CFFTW
import Foundation

/// A real-input FFT of one fixed size over FFTW (single precision), planned once.
///
/// Work happens in two owned, SIMD-aligned buffers: write `size` samples into `time`, call
/// `forward()`, read `size / 2 + 1` complex bins from `spectrum` (interleaved re, im); or write
/// `spectrum`, call `inverse()` and read `time`. The inverse is scaled by 1/size, so a round
/// trip returns the input. `forward` and `inverse` neither allocate nor lock.
public final class RealFFT {
    public let size: Int
    public var binCount: Int { size / 2 + 1 }
    /// `size` real samples.
    public let time: UnsafeMutableBufferPointer<Float>
    /// `binCount` complex bins, interleaved: re0, im0, re1, im1, …
    public let spectrum: UnsafeMutableBufferPointer<Float>
    private let scratch: UnsafeMutablePointer<Float>
    private let forwardPlan: fftwf_plan
    private let inversePlan: fftwf_plan

    /// FFTW's planner is not thread-safe; execution is. Planning happens in `prepare`, never
    /// on the audio path, so a lock here costs nothing where it matters.
    private static let plannerLock = NSLock()

    /// How hard FFTW looks for the fastest plan. Measuring pays off for the small sizes used
    /// over and over in streaming; for one-off transforms of millions of points, planning
    /// would cost more than it saves.
    public enum Planning: Sendable {
        case measure, estimate

        /// Measure up to 2¹⁶ points, estimate beyond.
        public static func suited(to size: Int) -> Planning { size <= 65_536 ? .measure : .estimate }
    }

    public convenience init(size: Int) {
        self.init(size: size, planning: .suited(to: size))
    }

    public init(size: Int, planning: Planning) {
        precondition(size >= 1, "FFT size must be positive")
        self.size = size
        let bins = size / 2 + 1
        let timePointer = fftwf_alloc_real(size)!
        let spectrumPointer = fftwf_alloc_real(2 * bins)!
        scratch = fftwf_alloc_real(2 * bins)!
        time = UnsafeMutableBufferPointer(start: timePointer, count: size)
        spectrum = UnsafeMutableBufferPointer(start: spectrumPointer, count: 2 * bins)
        let complexSpectrum = UnsafeMutableRawPointer(spectrumPointer).bindMemory(to: fftwf_complex.self, capacity: bins)
        let complexScratch = UnsafeMutableRawPointer(scratch).bindMemory(to: fftwf_complex.self, capacity: bins)
        Self.plannerLock.lock()
        let flags = UInt32(planning == .measure ? FFTW_MEASURE : FFTW_ESTIMATE)
        forwardPlan = fftwf_plan_dft_r2c_1d(Int32(size), timePointer, complexSpectrum, flags)!
        inversePlan = fftwf_plan_dft_c2r_1d(Int32(size), complexScratch, timePointer, flags)!
        Self.plannerLock.unlock()
        // FFTW_MEASURE scribbles on the buffers while planning.
        time.update(repeating: 0)
        spectrum.update(repeating: 0)
    }

    deinit {
        Self.plannerLock.lock()
        fftwf_destroy_plan(forwardPlan)
        fftwf_destroy_plan(inversePlan)
        Self.plannerLock.unlock()
        fftwf_free(time.baseAddress)
        fftwf_free(spectrum.baseAddress)
        fftwf_free(scratch)
    }

    /// `time` → `spectrum` (unnormalised, as FFTW and NumPy define it).
    public func forward() {
        fftwf_execute(forwardPlan)
    }

    /// `spectrum` → `time`, scaled by 1/size. `spectrum` is left intact.
    public func inverse() {
        // The c2r transform destroys its input, so it runs on a copy.
        scratch.update(from: spectrum.baseAddress!, count: spectrum.count)
        fftwf_execute(inversePlan)
        let scale = 1 / Float(size)
        for i in 0..<size { time[i] *= scale }
    }

    /// A size ≥ `minimum` that FFTW transforms fast: the smallest with prime factors 2, 3, 5
    /// and 7 for sizes it will measure; beyond that, where plans are only estimated, the
    /// smallest of the form 2ᵃ·3ᵇ·5ᶜ with a ≥ 5 (estimated plans for factors of 7 or few
    /// factors of 2 run up to three times slower: 5 953 500 points take 86 ms here, 6 000 000
    /// take 30 ms).
    public static func fastSize(atLeast minimum: Int) -> Int {
        guard minimum > 1 else { return 1 }
        let estimated = Planning.suited(to: minimum) == .estimate
        let sevens = estimated ? 1 : 7
        var best = Int.max
        var p2 = estimated ? 32 : 1
        while p2 < 2 * minimum {
            var p3 = p2
            while p3 < 2 * minimum {
                var p5 = p3
                while p5 < 2 * minimum {
                    var p7 = p5
                    while p7 < minimum && sevens > 1 { p7 *= sevens }
                    if p7 >= minimum { best = min(best, p7) }
                    p5 *= 5
                }
                p3 *= 3
            }
            p2 *= 2
        }
        return best
    }

    /// Power |X_k|² of bin k.
    @inlinable
    public func power(bin k: Int) -> Float {
        let re = spectrum[2 * k], im = spectrum[2 * k + 1]
        return re * re + im * im
    }

    /// Convenience (allocates): the spectrum of `signal` (zero-padded or truncated to `size`)
    /// as separate real and imaginary parts.
    public func transform(_ signal: [Float]) -> (real: [Float], imaginary: [Float]) {
        time.update(repeating: 0)
        for i in 0..<min(size, signal.count) { time[i] = signal[i] }
        forward()
        return ((0..<binCount).map { spectrum[2 * $0] }, (0..<binCount).map { spectrum[2 * $0 + 1] })
    }
}
