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
    /// A filter told to narrow (`narrowsTo`) does so once this share of its response's energy lies
    /// within that many partitions, after `heardToNarrow` blocks of far end (1 s).
    static let narrowShare: Float = 0.6
    static let heardToNarrow = 200
    /// A filter that has learnt a path and then lost it for `lostBlocksToRestart` blocks (0.1 s)
    /// starts again over its whole span: the loudspeaker moved (for a narrowed filter, perhaps
    /// outside its span). Lost: it predicts echo (over a tenth of the microphone's energy) that
    /// the microphone does not hold — their correlation's square is under `lostCorrelation` —
    /// and it leaves more than half the microphone. Near-end talk over a right prediction keeps
    /// the correlation (its square is the echo's share of the microphone), and near-end talk
    /// alone comes with no echo predicted. Without this a moved path was taken for double talk:
    /// the filter barely moved, and after a delay jump from 0.1 to 0.7 s it was still at 0 dB
    /// ten seconds later.
    static let lostBlocksToRestart = 20
    static let lostCorrelation: Float = 0.02

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
    /// Narrowing: how many partitions the path is expected to fit in; scratch for each
    /// partition's share of the echo and the far end's spectrum; where the narrowed span starts
    /// (−1: not narrowed); the blocks counted towards narrowing and towards a lost path, and the
    /// smoothed energies of the prediction and of its product with the microphone.
    let narrowsTo: Int
    private let partitionEnergy: UnsafeMutablePointer<Float>
    private var spanStart = -1
    private var heardBlocks = 0, lostBlocks = 0
    private var echoLevel: Float = 0, crossLevel: Float = 0

    /// `narrowsTo`: a filter whose path may lie anywhere in a long span (a loudspeaker's delay
    /// unknown, as live) but fits in fewer partitions learns as slowly as it is long (each
    /// partition's step shrinks with the uncertainty the others hold). Given this many
    /// partitions, it finds where most of its response lies and stops learning (and adding
    /// uncertainty) outside it, so it learns from then on as fast as a short filter would.
    init(blockSize: Int, partitions: Int, narrowsTo: Int? = nil) {
        self.blockSize = blockSize
        self.partitions = max(1, partitions)
        self.narrowsTo = min(self.partitions, max(1, narrowsTo ?? self.partitions))
        partitionEnergy = .allocate(capacity: self.partitions + blockSize + 1)
        partitionEnergy.initialize(repeating: 0, count: self.partitions + blockSize + 1)
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

    deinit {
        storage.deallocate()
        partitionEnergy.deallocate()
    }

    func reset() {
        storage.update(repeating: 0, count: 6 * cells + 4 * bins + 2 * blockSize)
        uncertainty.update(repeating: Self.initialUncertainty, count: cells)
        head = 0
        micLevel = 0; errorLevel = 0; micPeak = 0
        converged = false
        staleCount = 0
        spanStart = -1
        heardBlocks = 0; lostBlocks = 0
        echoLevel = 0; crossLevel = 0
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
        var micEnergy: Float = 0, errorEnergy: Float = 0, echoEnergy: Float = 0, crossEnergy: Float = 0
        for i in 0..<b {
            // A microphone driven past full scale heard only full scale: the echo it predicts is
            // clipped there too, so the filter neither leaves the clipped-off part in the output
            // nor learns from samples that say nothing about the path beyond full scale.
            let heard = abs(mic[i])
            let echo = heard >= Self.fullScale ? min(max(time[b + i], -heard), heard) : time[b + i]
            error[i] = mic[i] - echo
            micEnergy += mic[i] * mic[i]
            errorEnergy += error[i] * error[i]
            echoEnergy += echo * echo
            crossEnergy += echo * mic[i]
        }
        trackStaleness(micEnergy: micEnergy, errorEnergy: errorEnergy)
        trackLoss(echoEnergy: echoEnergy, crossEnergy: crossEnergy)
        if narrowsTo < parts, spanStart < 0 {
            var farEnergy: Float = 0
            for i in 0..<b { farEnergy += far[i] * far[i] }
            if farEnergy > 1e-8 * Float(b) {
                heardBlocks += 1
                narrow()
            }
        }
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

    /// The echo's power per bin as the path's magnitude predicts it, Σ_p |W_p|² |X_{n−p}|²: blind
    /// to phase, so it still follows an echo that a loudspeaker's distortion, a changing path or
    /// the capture side's processing has made incoherent with the far end.
    func echoPower(into out: UnsafeMutablePointer<Float>) {
        let bins = self.bins, parts = partitions
        out.update(repeating: 0, count: bins)
        // A narrowed filter holds nothing outside its span.
        for p in spanStart >= 0 ? spanStart..<(spanStart + narrowsTo) : 0..<parts {
            let x2 = farPower + ((head + p) % parts) * bins
            let wr = wRe + p * bins, wi = wIm + p * bins
            for k in 0..<bins { out[k] += (wr[k] * wr[k] + wi[k] * wi[k]) * x2[k] }
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
        if converged, staleCount >= Self.staleBlocks { restart() }
    }

    /// Forgets the path: the whole span as uncertain as at the start.
    private func restart() {
        converged = false
        staleCount = 0
        for i in 0..<cells { uncertainty[i] = max(uncertainty[i], Self.initialUncertainty) }
        wRe.update(repeating: 0, count: cells)
        wIm.update(repeating: 0, count: cells)
        spanStart = -1
        heardBlocks = 0; lostBlocks = 0
    }

    /// A filter that has lost its path starts again; the old response goes too (left in a
    /// narrowed filter, it would be found again where the path was). A quiet microphone says
    /// nothing either way.
    private func trackLoss(echoEnergy: Float, crossEnergy: Float) {
        echoLevel = 0.7 * echoLevel + 0.3 * echoEnergy
        crossLevel = 0.7 * crossLevel + 0.3 * crossEnergy
        guard converged || spanStart >= 0, micLevel > 0.01 * micPeak else { return }
        let lost = errorLevel > 0.5 * micLevel && echoLevel > 0.1 * micLevel
            && crossLevel * crossLevel < Self.lostCorrelation * micLevel * echoLevel
        lostBlocks = lost ? lostBlocks + 1 : 0
        if lostBlocks >= Self.lostBlocksToRestart { restart() }
    }

    /// Narrows the filter to the `narrowsTo` partitions that hold most of its response once it has
    /// heard enough far end to tell.
    private func narrow() {
        // Checked every 20 blocks of far end (100 ms): a sum over the whole response.
        guard heardBlocks >= Self.heardToNarrow, heardBlocks % 20 == 0 else { return }
        // Each partition's share of the echo: its response's power weighted by the far end's
        // spectrum over the filter's span (a bin the far end leaves empty carries no echo,
        // whatever its coefficients have wandered to).
        let farSpectrum = partitionEnergy + partitions
        farSpectrum.update(repeating: 0, count: bins)
        for p in 0..<partitions {
            let x2 = farPower + p * bins
            for k in 0..<bins { farSpectrum[k] += x2[k] }
        }
        var total: Float = 0
        for p in 0..<partitions {
            let wr = wRe + p * bins, wi = wIm + p * bins
            var e: Float = 0
            for k in 0..<bins { e += (wr[k] * wr[k] + wi[k] * wi[k]) * farSpectrum[k] }
            partitionEnergy[p] = e
            total += e
        }
        guard total > 0 else { return }
        // The span starts a little before the strongest partition (the direct sound): with speech
        // as the far end, partitions before the path's delay pick up what correlates with it.
        var peak = 0
        for p in 1..<partitions where partitionEnergy[p] > partitionEnergy[peak] { peak = p }
        let start = max(0, min(partitions - narrowsTo, peak - narrowsTo / 10))
        var best: Float = 0
        for p in start..<(start + narrowsTo) { best += partitionEnergy[p] }
        guard best >= Self.narrowShare * total else { return }
        for p in 0..<partitions where p < start || p >= start + narrowsTo {
            (uncertainty + p * bins).update(repeating: 0, count: bins)
            (wRe + p * bins).update(repeating: 0, count: bins)
            (wIm + p * bins).update(repeating: 0, count: bins)
        }
        spanStart = start
        lostBlocks = 0
    }
}
