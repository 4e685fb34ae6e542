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
    /// gives way to near-end speech in double talk (alone, double-talk PESQ 1.97 against 2.12
    /// on `make eval-capture`'s scenes).
    static let transition: Float = 0.9999
    /// Smoothing of the error power that stands for the near end and noise (per 5 ms block).
    static let errorSmoothing: Float = 0.9
    /// A response coefficient's uncertainty before anything is known: about what one 5 ms
    /// partition of a loudspeaker-to-microphone path holds. Ten times more overshoots where the
    /// far end starts loud after a silence.
    static let initialUncertainty: Float = 0.1
    /// A filter that had converged and then, for `staleBlocks` blocks in a row, adds more than it
    /// takes away (error over `staleRatio` times the microphone, within 20 dB of its recent
    /// peak) models a path that is gone: its uncertainty is raised back so it learns anew.
    static let staleRatio: Float = 2
    static let staleBlocks = 8

    private let fft: RealFFT
    private let bins: Int
    // Per partition and bin (partition-major): far-end spectra as a ring (newest at `head`),
    // the response, and its uncertainty. Complex values as separate real and imaginary parts.
    private var farRe: [Float], farIm: [Float]
    private var wRe: [Float], wIm: [Float]
    private var uncertainty: [Float]
    private var farPower: [Float]
    private var head = 0
    // Block energies of the microphone and the error, smoothed, and the microphone's recent peak.
    private var micLevel: Float = 0, errorLevel: Float = 0, micPeak: Float = 0
    private var converged = false
    private var staleCount = 0
    private var farWindow: [Float]
    private var errorRe: [Float], errorIm: [Float], errorPower: [Float], expected: [Float]

    init(blockSize: Int, partitions: Int) {
        self.blockSize = blockSize
        self.partitions = max(1, partitions)
        fft = RealFFT(size: 2 * blockSize)
        bins = blockSize + 1
        let cells = self.partitions * bins
        farRe = [Float](repeating: 0, count: cells)
        farIm = [Float](repeating: 0, count: cells)
        wRe = [Float](repeating: 0, count: cells)
        wIm = [Float](repeating: 0, count: cells)
        uncertainty = [Float](repeating: Self.initialUncertainty, count: cells)
        farPower = [Float](repeating: 0, count: cells)
        farWindow = [Float](repeating: 0, count: 2 * blockSize)
        errorRe = [Float](repeating: 0, count: bins)
        errorIm = [Float](repeating: 0, count: bins)
        errorPower = [Float](repeating: 0, count: bins)
        expected = [Float](repeating: 0, count: bins)
    }

    func reset() {
        for i in farRe.indices {
            farRe[i] = 0; farIm[i] = 0; wRe[i] = 0; wIm[i] = 0; farPower[i] = 0
            uncertainty[i] = Self.initialUncertainty
        }
        for i in farWindow.indices { farWindow[i] = 0 }
        for k in 0..<bins { errorPower[k] = 0 }
        head = 0
        micLevel = 0; errorLevel = 0; micPeak = 0
        converged = false
        staleCount = 0
    }

    /// One block: `error` = `mic` − the echo the filter predicts from `far`; then the filter learns.
    func cancel(mic: UnsafeBufferPointer<Float>, far: UnsafeBufferPointer<Float>, error: UnsafeMutableBufferPointer<Float>) {
        let b = blockSize, bins = self.bins, parts = partitions
        // The newest far-end spectrum: the last two blocks, overlap-save.
        for i in 0..<b { farWindow[i] = farWindow[i + b]; farWindow[i + b] = far[i] }
        for i in 0..<(2 * b) { fft.time[i] = farWindow[i] }
        fft.forward()
        head = (head + parts - 1) % parts
        let base = head * bins
        for k in 0..<bins {
            let re = fft.spectrum[2 * k], im = fft.spectrum[2 * k + 1]
            farRe[base + k] = re; farIm[base + k] = im
            farPower[base + k] = re * re + im * im
        }
        // The echo estimate: Σ_p X_{n−p} W_p; its last block is the linear convolution.
        for k in 0..<(2 * bins) { fft.spectrum[k] = 0 }
        for p in 0..<parts {
            let x = ((head + p) % parts) * bins, w = p * bins
            for k in 0..<bins {
                let xr = farRe[x + k], xi = farIm[x + k], wr = wRe[w + k], wi = wIm[w + k]
                fft.spectrum[2 * k] += xr * wr - xi * wi
                fft.spectrum[2 * k + 1] += xr * wi + xi * wr
            }
        }
        fft.inverse()
        var micEnergy: Float = 0, errorEnergy: Float = 0
        for i in 0..<b {
            error[i] = mic[i] - fft.time[b + i]
            micEnergy += mic[i] * mic[i]
            errorEnergy += error[i] * error[i]
        }
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
            for i in uncertainty.indices { uncertainty[i] = max(uncertainty[i], Self.initialUncertainty) }
        }
        for i in 0..<b { fft.time[i] = 0; fft.time[b + i] = error[i] }
        fft.forward()
        let a = Self.errorSmoothing, scale: Float = 0.5
        for k in 0..<bins {
            errorRe[k] = fft.spectrum[2 * k]; errorIm[k] = fft.spectrum[2 * k + 1]
            errorPower[k] = a * errorPower[k] + (1 - a) * (errorRe[k] * errorRe[k] + errorIm[k] * errorIm[k])
            expected[k] = errorPower[k] + 1e-10
        }
        // What the uncertainty alone would leave in the error.
        for p in 0..<parts {
            let x = ((head + p) % parts) * bins, w = p * bins
            for k in 0..<bins { expected[k] += scale * farPower[x + k] * uncertainty[w + k] }
        }
        let keep = Self.transition * Self.transition
        for p in 0..<parts {
            let x = ((head + p) % parts) * bins, w = p * bins
            // Kalman gain times the error, per bin: μ conj(X) E.
            for k in 0..<bins {
                let mu = uncertainty[w + k] / expected[k]
                let xr = farRe[x + k], xi = farIm[x + k], er = errorRe[k], ei = errorIm[k]
                fft.spectrum[2 * k] = mu * (xr * er + xi * ei)
                fft.spectrum[2 * k + 1] = mu * (xr * ei - xi * er)
                uncertainty[w + k] *= keep * (1 - scale * mu * farPower[x + k])
            }
            // Constrained to one block of response: a circular wrap would smear the echo.
            fft.inverse()
            for i in b..<(2 * b) { fft.time[i] = 0 }
            fft.forward()
            for k in 0..<bins {
                wRe[w + k] += fft.spectrum[2 * k]
                wIm[w + k] += fft.spectrum[2 * k + 1]
                uncertainty[w + k] += (1 - keep) * (wRe[w + k] * wRe[w + k] + wIm[w + k] * wIm[w + k])
            }
        }
    }
}
