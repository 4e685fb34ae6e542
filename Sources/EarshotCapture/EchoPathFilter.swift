import EarshotDSP
import Foundation

/// A model of the echo path, learnt as it plays: a partitioned-block frequency-domain adaptive
/// filter whose step size is a Kalman gain (Enzner & Vary 2006; Kuech et al. 2014, diagonal form).
///
/// The response, `partitions` blocks long, is held per partition and bin together with how
/// uncertain each coefficient still is. A bin's step is that uncertainty over the error it
/// expects: the echo the uncertainty leaves plus what the filter cannot model — near-end speech
/// and noise, read from the error's recent power. So the filter learns fast while it knows
/// little, and barely moves while the near end talks over the echo, with no double-talk
/// detector to fool. The uncertainty grows back slowly (`transition`), which lets the filter
/// follow a path that changes.
///
/// Overlap-save with blocks of `blockSize` samples and transforms of twice that; each
/// partition's update is constrained to a causal response of one block, so the filter stays a
/// linear convolution. `cancel` neither allocates nor locks.
final class EchoPathFilter {
    let blockSize: Int
    let partitions: Int
    /// How much of each coefficient is kept from one block to the next (A in the state-space
    /// model): 1 − 10⁻⁴ per 5 ms. With 0.9995 the filter follows a changing path sooner and
    /// gives way to near-end speech in double talk (the filter alone, in a prototype on
    /// `make eval-capture`'s scenes: double-talk PESQ 1.80 against 2.12).
    static let transition: Float = 0.9999
    /// Smoothing of the error power that stands for the near end and noise (per 5 ms block).
    static let errorSmoothing: Float = 0.9
    /// A response coefficient's uncertainty before anything is known: about what one 5 ms
    /// partition of a loudspeaker-to-microphone path holds. Ten times more overshoots where the
    /// far end starts loud after a silence.
    static let initialUncertainty: Float = 0.1
    /// A filter that had converged and then, for `staleBlocks` blocks in a row, adds more than it
    /// takes away (error over `staleRatio` times the microphone, within 20 dB of its recent
    /// peak) models a path that is gone: it is cleared, so it stops adding a wrong echo, and
    /// learns anew (after a moved loudspeaker, ERLE over the next 2 s went from 0.5–1.9 dB when
    /// only its uncertainty was raised to 2.5–3.4 dB).
    static let staleRatio: Float = 2
    static let staleBlocks = 8
    /// A sample at or over this is taken to be clipped by the converter (float full scale is 1;
    /// 16-bit full scale is 32767/32768).
    static let fullScale: Float = 0.999

    private let fft: RealFFT
    private let bins: Int
    // One allocation, made in init, for everything a block touches (the audio path must not
    // allocate, and plain pointers keep the per-bin loops free of checks). Per partition and
    // bin, partition-major: far-end spectra as a ring (newest at `head`) and their power, the
    // response, and its uncertainty; complex values as separate real and imaginary parts.
    private let storage: UnsafeMutablePointer<Float>
    private let farRe, farIm, farPower, wRe, wIm, uncertainty: UnsafeMutablePointer<Float>
    // Per bin: this block's error spectrum, its smoothed power, and the error the filter expects.
    private let errorRe, errorIm, errorPower, expected: UnsafeMutablePointer<Float>
    /// The last two far-end blocks (overlap-save).
    private let farWindow: UnsafeMutablePointer<Float>
    private let cells: Int
    private var head = 0
    // Block energies of the microphone and the error, smoothed, and the microphone's recent peak.
    private var micLevel: Float = 0, errorLevel: Float = 0, micPeak: Float = 0
    private var converged = false
    private var staleCount = 0

    init(blockSize: Int, partitions: Int) {
        self.blockSize = blockSize
        self.partitions = max(1, partitions)
        fft = RealFFT(size: 2 * blockSize)
        bins = blockSize + 1
        cells = self.partitions * bins
        let total = 6 * cells + 4 * bins + 2 * blockSize
        storage = .allocate(capacity: total)
        storage.initialize(repeating: 0, count: total)
        var next = storage
        func take(_ count: Int) -> UnsafeMutablePointer<Float> {
            defer { next += count }
            return next
        }
        farRe = take(cells); farIm = take(cells); farPower = take(cells)
        wRe = take(cells); wIm = take(cells); uncertainty = take(cells)
        errorRe = take(bins); errorIm = take(bins); errorPower = take(bins); expected = take(bins)
        farWindow = take(2 * blockSize)
        reset()
    }

    deinit { storage.deallocate() }

    func reset() {
        storage.update(repeating: 0, count: 6 * cells + 4 * bins + 2 * blockSize)
        uncertainty.update(repeating: Self.initialUncertainty, count: cells)
        head = 0
        micLevel = 0; errorLevel = 0; micPeak = 0
        converged = false
        staleCount = 0
    }

    /// One block: `error` = `mic` − the echo the filter predicts from `far`; then the filter learns.
    func cancel(mic: UnsafeBufferPointer<Float>, far: UnsafeBufferPointer<Float>, error: UnsafeMutableBufferPointer<Float>) {
        let b = blockSize, bins = self.bins, parts = partitions
        let time = fft.time.baseAddress!, spectrum = fft.spectrum.baseAddress!
        // The newest far-end spectrum: the last two blocks, overlap-save.
        for i in 0..<b { farWindow[i] = farWindow[i + b]; farWindow[i + b] = far[i] }
        time.update(from: farWindow, count: 2 * b)
        fft.forward()
        head = (head + parts - 1) % parts
        let newest = head * bins
        for k in 0..<bins {
            let re = spectrum[2 * k], im = spectrum[2 * k + 1]
            farRe[newest + k] = re; farIm[newest + k] = im
            farPower[newest + k] = re * re + im * im
        }
        // The echo estimate: Σ_p X_{n−p} W_p; its last block is the linear convolution.
        spectrum.update(repeating: 0, count: 2 * bins)
        for p in 0..<parts {
            let xr = farRe + ((head + p) % parts) * bins, xi = farIm + ((head + p) % parts) * bins
            let wr = wRe + p * bins, wi = wIm + p * bins
            for k in 0..<bins {
                spectrum[2 * k] += xr[k] * wr[k] - xi[k] * wi[k]
                spectrum[2 * k + 1] += xr[k] * wi[k] + xi[k] * wr[k]
            }
        }
        fft.inverse()
        var micEnergy: Float = 0, errorEnergy: Float = 0
        for i in 0..<b {
            // A microphone driven past full scale heard only full scale: the echo it predicts is
            // clipped there too, so the filter neither leaves the clipped-off part in the output
            // nor learns from samples that say nothing about the path beyond full scale.
            let heard = abs(mic[i])
            let echo = heard >= Self.fullScale ? min(max(time[b + i], -heard), heard) : time[b + i]
            error[i] = mic[i] - echo
            micEnergy += mic[i] * mic[i]
            errorEnergy += error[i] * error[i]
        }
        trackStaleness(micEnergy: micEnergy, errorEnergy: errorEnergy)
        time.update(repeating: 0, count: b)
        for i in 0..<b { time[b + i] = error[i] }
        fft.forward()
        let a = Self.errorSmoothing, scale: Float = 0.5
        for k in 0..<bins {
            errorRe[k] = spectrum[2 * k]; errorIm[k] = spectrum[2 * k + 1]
            errorPower[k] = a * errorPower[k] + (1 - a) * (errorRe[k] * errorRe[k] + errorIm[k] * errorIm[k])
            expected[k] = errorPower[k] + 1e-10
        }
        // What the uncertainty alone would leave in the error.
        for p in 0..<parts {
            let x2 = farPower + ((head + p) % parts) * bins, u = uncertainty + p * bins
            for k in 0..<bins { expected[k] += scale * x2[k] * u[k] }
        }
        let keep = Self.transition * Self.transition
        for p in 0..<parts {
            let x = ((head + p) % parts) * bins
            let xr = farRe + x, xi = farIm + x, x2 = farPower + x
            let wr = wRe + p * bins, wi = wIm + p * bins, u = uncertainty + p * bins
            // Kalman gain times the error, per bin: μ conj(X) E.
            for k in 0..<bins {
                let mu = u[k] / expected[k]
                spectrum[2 * k] = mu * (xr[k] * errorRe[k] + xi[k] * errorIm[k])
                spectrum[2 * k + 1] = mu * (xr[k] * errorIm[k] - xi[k] * errorRe[k])
                u[k] *= keep * (1 - scale * mu * x2[k])
            }
            // Constrained to one block of response: a circular wrap would smear the echo.
            fft.inverse()
            (time + b).update(repeating: 0, count: b)
            fft.forward()
            for k in 0..<bins {
                wr[k] += spectrum[2 * k]
                wi[k] += spectrum[2 * k + 1]
                u[k] += (1 - keep) * (wr[k] * wr[k] + wi[k] * wi[k])
            }
        }
    }

    /// A filter that had converged and now adds echo has lost its path: it starts again.
    private func trackStaleness(micEnergy: Float, errorEnergy: Float) {
        micLevel = 0.7 * micLevel + 0.3 * micEnergy
        errorLevel = 0.7 * errorLevel + 0.3 * errorEnergy
        micPeak = max(micLevel, 0.999 * micPeak)
        if errorLevel < 0.1 * micLevel { converged = true }
        if errorLevel <= Self.staleRatio * micLevel {
            staleCount = 0
        } else if micLevel > 0.01 * micPeak {
            staleCount += 1
        }
        if converged, staleCount >= Self.staleBlocks {
            converged = false
            staleCount = 0
            for i in 0..<cells { uncertainty[i] = max(uncertainty[i], Self.initialUncertainty) }
            wRe.update(repeating: 0, count: cells)
            wIm.update(repeating: 0, count: cells)
        }
    }
}
