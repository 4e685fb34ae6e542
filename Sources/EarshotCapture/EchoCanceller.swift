import EarshotCore
import EarshotDSP
import Foundation

/// Acoustic echo cancellation: what the loudspeaker played (the far end) is taken out of what
/// the microphone heard.
///
/// A frequency-domain Kalman filter (`EchoPathFilter`: its step size is how uncertain it still is
/// over how much near end and noise it hears, so double talk barely moves it) models the echo
/// path over `tailSeconds`, long enough for a loudspeaker up to 300 ms late and a room's tail; it
/// follows a changing path by adapting, and relearns one that is gone. What it leaves goes to a
/// residual echo suppressor of our own. On real devices most of the echo is not linear — the
/// loudspeaker distorts, the capture side has its own processing, the path moves — so the
/// residual is estimated per bin from two things that follow the echo whatever its phase: the
/// filter's echo estimate, and the far end's power through the path's magnitude. Each is scaled
/// by how much of it still shows in the output, measured as a ratio of averages wherever the
/// microphone is mostly echo (so near-end speech is not learnt as echo), and the larger of the two
/// is the residual; a Wiener gain on it, floored at `floorDB`, lowers what is echo and leaves
/// near-end speech, whose output power stands above the residual, nearly untouched. While the
/// far end plays alone and the echo is linear enough to be coherent with the estimate across
/// the speech band, each bin is lowered further by how coherent it is, the way WebRTC's older
/// echo suppressor did. No bin ever comes out louder than the microphone had it: where the
/// filter's output outweighs the microphone (a path it has not learnt or has lost), the
/// microphone is passed on instead. At 16 kHz and above, a learned mask (`EchoMask`) over the
/// same frames can lower each bin further: its gain raised to `maskExponent` (0: not used; under
/// 1: gentler than trained) multiplies the suppressor's. Where the room's own noise went with
/// the echo, comfort noise (`ComfortNoise`, where asked for) fills it back in, so the background
/// does not come and go with the far end.
///
/// Blocks carry two channels: 0 the microphone, 1 the far end. Channel 0 comes out cleaned,
/// channel 1 as it went in; both are delayed by `latencySamples` (5 ms frames, overlap-added: under 10 ms).
public final class EchoCanceller: AudioProcessor {
    public let tailSeconds: Double
    public let floorDB: Double
    /// How much more residual echo than measured is assumed when suppressing (dB): more takes
    /// more echo and more of the near end in double talk.
    public let overestimateDB: Double
    /// The suppressor's depth and boldness by default. Chosen on the soft-loudspeaker and linear
    /// echo scenes of training speakers (`evaluate.py --split train --seed 77 --per-kind 8`):
    /// the most far-end-only ERLE among floors of −40…−20 dB and overestimates of 0–10 dB with
    /// no double-talk PESQ or degradation MOS more than 0.01 under −40 dB with nothing assumed,
    /// the setting before (soft 19.8 → 21.3 dB, linear 41.0 → 41.8 dB). A shallower floor
    /// leaves the near end whole where it is under the echo; the overestimate takes what a
    /// measured share leaves of a distorted loudspeaker's echo.
    public static let defaultFloorDB = -25.0
    public static let defaultOverestimateDB = 3.0
    /// Live (`capture --mode voice_isolation`), the setting before, measured through the live
    /// echo test's sound server (`Tests/Live/live_echo.py`).
    public static let liveFloorDB = -40.0
    public static let liveOverestimateDB = 0.0
    /// How strongly the learned mask acts: its gains are raised to this power (0: not used).
    public let maskExponent: Double
    /// Chosen through `earshot aec --echo-mask` on the soft-loudspeaker and linear scenes of
    /// training speakers (`evaluate.py --split train --seed 78 --per-kind 24`): the strongest of
    /// 0.1, 0.2 and 0.35 whose double-talk PESQ and degradation MOS stay within 0.1 of the
    /// suppressor alone on both (soft 23.0 → 30.1 dB far-end-only ERLE, linear 43.0 → 51.8 dB).
    /// Live too: through the live echo test's sound server it left the echo deeper under the near talker.
    public static let defaultMaskExponent = 0.1
    /// Comfort noise (`ComfortNoise`) where the echo was suppressed, in dB relative to the room's
    /// noise as measured; nil: none.
    public let comfortNoiseDB: Double?
    /// None by default. On the training scenes 0 dB passed the rule that chose the mask's power
    /// (double-talk PESQ and degradation MOS within 0.1 of none: −0.03 and −0.04), and on the
    /// real device recordings it left the degradation as it was and raised the far-end echo MOS
    /// 3.45 → 3.85; but on the hard loudspeaker's development scenes the degradation fell 3.07 →
    /// 2.76, and it costs 1.2 dB of real far-end ERLE (`docs/capture.md`).
    public static let defaultComfortNoiseDB: Double? = nil

    public static let frameSeconds = 0.005
    /// The powers the suppressor compares are smoothed over about 50 ms, and so are its gains:
    /// a gain that jumps from frame to frame lets the near end through with a warble. (Chosen on
    /// the soft-loudspeaker and linear echo scenes of training speakers, `evaluate.py --split
    /// train`, with a numpy model of this suppressor: with 0.6 and gains that fell at once,
    /// double-talk degradation MOS 2.46 and 3.55 against 3.25 and 3.77, and 2–4 dB less echo taken.)
    static let powerSmoothing: Float = 0.9
    static let gainSmoothing: Float = 0.9
    /// Added to every smoothed power (200 dB under full scale): powers and the averages made of
    /// them stay above zero, so their ratios need no guard, and none decays into subnormal
    /// numbers, which the CPU handles many times slower.
    static let tiny: Float = 1e-20
    /// A bin is mostly echo, and its residual is learnt from, while the microphone holds under
    /// this many times the filter's echo estimate there.
    static let echoDominance: Float = 2
    /// How fast the residual's share is learnt: per 5 ms frame, about a tenth of a second.
    static let shareRate: Float = 0.05
    /// Nor is it learnt where the output stands more than this many times over the residual
    /// last estimated: the near end talks there, however loud the echo under it. (Without this,
    /// in double talk over a loud linear echo the share swelled to the near end's level: on
    /// `make eval-capture`'s linear scenes double-talk PESQ 1.53, against 1.91 with it.)
    static let learnsUnder: Float = 4
    /// The coherence of the echo estimate and the microphone is smoothed over about 50 ms.
    static let coherenceSmoothing: Float = 0.9
    /// The far end plays alone when the mean coherence over 300 Hz–3 kHz passes this; each bin is
    /// then lowered to (1 − coherence)^echoOnlyExponent. Chosen on `make eval-capture`'s scenes
    /// between far-end-only ERLE and double-talk quality: a deeper exponent or a lower threshold
    /// gains ERLE and loses near-end speech wherever a loud echo keeps the coherence high.
    static let echoOnlyCoherence: Float = 0.8
    static let echoOnlyExponent: Float = 0.5
    static let leastEchoShare: Float = 0.1
    /// An echo estimate 10 dB under the filter's output: the room's noise may be read there.
    static let faintEcho: Float = 0.1

    private var filter: EchoPathFilter?
    private var frame = 0
    private var fft: RealFFT?
    private var window: [Float] = []
    // Per-frame work, allocated in prepare.
    private var micFrame: [Float] = [], farFrame: [Float] = [], outFrame: [Float] = []
    private var filled = 0
    private var micHistory: [Float] = [], errorHistory: [Float] = []
    private var overlap: [Float] = []
    private var errorPower: [Float] = [], echoPower: [Float] = [], gains: [Float] = []
    // The microphone's smoothed power, the path's echo power (`EchoPathFilter.echoPower`) this
    // frame and smoothed, and the averages whose ratios are the shares of the residual: output
    // over path power, output over echo estimate, learnt where the microphone is mostly echo.
    private var micPower: [Float] = [], pathNow: [Float] = [], pathPower: [Float] = []
    private var outOnPath: [Float] = [], pathOnPath: [Float] = [], outOnEcho: [Float] = [], echoOnEcho: [Float] = []
    private var residual: [Float] = []
    // Smoothed spectra of the microphone D and the echo estimate Y = D − E (E: the filter's
    // output), their cross-spectrum (interleaved re, im), and the microphone's spectrum this frame.
    private var micSpectrum: [Float] = []
    private var sdd: [Float] = [], syy: [Float] = [], syd: [Float] = []
    private var bandLow = 1, bandHigh = 1
    // The learned mask, where it acts: its state, the powers it reads (microphone, output, echo
    // estimate, as a 160-point frame at 16 kHz has them) and its gains.
    private var mask: EchoMask?
    private var maskState: EchoMask.State?
    private var maskMic: [Float] = [], maskOut: [Float] = [], maskEcho: [Float] = [], maskGains: [Float] = []
    private var maskAbove: Float = 1
    private var comfort: ComfortNoise?
    private var powerScale: Float = 1
    private var pending: RingOfSamples = RingOfSamples(capacity: 1)
    private var farDelay: RingOfSamples = RingOfSamples(capacity: 1)

    /// The echo path's own length, where `tailSeconds` also covers a delay not known in advance
    /// (live): the filter narrows to it once it has found where the path lies (`EchoPathFilter`).
    public let pathSeconds: Double?

    public init(tailSeconds: Double = 0.5, pathSeconds: Double? = nil, floorDB: Double = defaultFloorDB,
                overestimateDB: Double = defaultOverestimateDB, maskExponent: Double = defaultMaskExponent,
                comfortNoiseDB: Double? = defaultComfortNoiseDB) {
        self.tailSeconds = tailSeconds
        self.maskExponent = maskExponent
        self.comfortNoiseDB = comfortNoiseDB
        self.pathSeconds = pathSeconds
        self.floorDB = floorDB
        self.overestimateDB = overestimateDB
    }

    public var latencySamples: Int { max(0, 2 * frame - 1) }

    public func prepare(_ spec: ProcessSpec) throws {
        guard spec.channelCount == 2 else {
            throw CaptureError.echoChannels(spec.channelCount)
        }
        guard (8_000...48_000).contains(spec.sampleRate) else {
            throw CaptureError.echoRate(spec.sampleRate)
        }
        frame = Int((Self.frameSeconds * spec.sampleRate).rounded())
        let framesPerSecond = spec.sampleRate / Double(frame)
        filter = EchoPathFilter(blockSize: frame, partitions: Int((tailSeconds * framesPerSecond).rounded(.up)),
                                narrowsTo: pathSeconds.map { Int(($0 * framesPerSecond).rounded(.up)) })
        fft = RealFFT(size: 2 * frame)
        // sqrt-Hann analysis and synthesis: their product overlap-adds to one at half overlap.
        window = Window.sqrtHann.coefficients(count: 2 * frame)
        // Each buffer its own storage: copies sharing one would be copied on the audio path.
        micFrame = [Float](repeating: 0, count: frame)
        farFrame = [Float](repeating: 0, count: frame)
        outFrame = [Float](repeating: 0, count: frame)
        micHistory = [Float](repeating: 0, count: 2 * frame)
        errorHistory = [Float](repeating: 0, count: 2 * frame)
        overlap = [Float](repeating: 0, count: frame)
        errorPower = [Float](repeating: 0, count: frame + 1)
        echoPower = [Float](repeating: 0, count: frame + 1)
        gains = [Float](repeating: 1, count: frame + 1)
        micPower = [Float](repeating: 0, count: frame + 1)
        pathNow = [Float](repeating: 0, count: frame + 1)
        pathPower = [Float](repeating: 0, count: frame + 1)
        outOnPath = [Float](repeating: 0, count: frame + 1)
        pathOnPath = [Float](repeating: 0, count: frame + 1)
        outOnEcho = [Float](repeating: 0, count: frame + 1)
        echoOnEcho = [Float](repeating: 0, count: frame + 1)
        residual = [Float](repeating: 0, count: frame + 1)
        micSpectrum = [Float](repeating: 0, count: 2 * (frame + 1))
        sdd = [Float](repeating: 0, count: frame + 1)
        syy = [Float](repeating: 0, count: frame + 1)
        syd = [Float](repeating: 0, count: 2 * (frame + 1))
        // Under 16 kHz the frame has no 4–8 kHz for the mask to read: the suppressor works alone.
        mask = maskExponent > 0 && spec.sampleRate >= 16_000 ? try EchoMask.bundled() : nil
        maskState = mask?.makeState()
        maskMic = [Float](repeating: 0, count: EchoMask.bins)
        maskOut = [Float](repeating: 0, count: EchoMask.bins)
        maskEcho = [Float](repeating: 0, count: EchoMask.bins)
        maskGains = [Float](repeating: 1, count: EchoMask.bins)
        comfort = comfortNoiseDB.map { ComfortNoise(bins: frame + 1, levelDB: $0, hopSeconds: Double(frame) / spec.sampleRate) }
        // Powers normalised by the analysis window's energy (Σw² = frame), so 48 kHz reads as 16 kHz.
        powerScale = 80 / Float(frame)
        bandLow = max(1, Int(300 * Double(2 * frame) / spec.sampleRate))
        bandHigh = min(frame, Int(3000 * Double(2 * frame) / spec.sampleRate))
        pending = RingOfSamples(capacity: 2 * frame + spec.maximumBlockFrames)
        farDelay = RingOfSamples(capacity: 2 * frame + spec.maximumBlockFrames)
        reset()
    }

    public func reset() {
        filter?.reset()
        filled = 0
        for i in micHistory.indices { micHistory[i] = 0; errorHistory[i] = 0 }
        for i in overlap.indices { overlap[i] = 0 }
        for k in gains.indices {
            gains[k] = 1; errorPower[k] = 0; echoPower[k] = 0; sdd[k] = 0; syy[k] = 0
            micPower[k] = 0; pathNow[k] = 0; pathPower[k] = 0
            // Until measured, all of the echo estimate is taken to be left (share 1) and nothing
            // of the path's power; every bin may learn.
            outOnPath[k] = 0; pathOnPath[k] = Self.tiny; outOnEcho[k] = Self.tiny; echoOnEcho[k] = Self.tiny
            residual[k] = .greatestFiniteMagnitude
        }
        for i in syd.indices { syd[i] = 0 }
        maskState?.reset()
        comfort?.reset()
        pending.clear()
        farDelay.clear()
        for _ in 0..<max(0, frame - 1) { pending.push(0) }
        for _ in 0..<latencySamples { farDelay.push(0) }
    }

    public func process(_ block: inout AudioBlock) {
        let mic = block.channel(0), far = block.channel(1)
        for n in 0..<block.frameCount {
            micFrame[filled] = mic[n]
            farFrame[filled] = far[n]
            farDelay.push(far[n])
            filled += 1
            if filled == frame {
                runFrame()
                filled = 0
            }
            mic[n] = pending.pop()
            far[n] = farDelay.pop()
        }
    }

    private func runFrame() {
        guard let filter, let fft else { return }
        micFrame.withUnsafeBufferPointer { m in
            farFrame.withUnsafeBufferPointer { f in
                outFrame.withUnsafeMutableBufferPointer { o in filter.cancel(mic: m, far: f, error: o) }
            }
        }
        pathNow.withUnsafeMutableBufferPointer { filter.echoPower(into: $0.baseAddress!) }
        var farEnergy: Float = 0
        for i in 0..<frame { farEnergy += farFrame[i] * farFrame[i] }
        // Two frames of the microphone and of the filter's output; their difference is its echo estimate.
        for i in 0..<frame {
            micHistory[i] = micHistory[i + frame]
            errorHistory[i] = errorHistory[i + frame]
            micHistory[i + frame] = micFrame[i]
            errorHistory[i + frame] = outFrame[i]
        }
        let bins = frame + 1
        // The microphone's spectrum, then the output's (kept in fft.spectrum for the synthesis).
        for i in 0..<(2 * frame) { fft.time[i] = micHistory[i] * window[i] }
        fft.forward()
        for i in 0..<(2 * bins) { micSpectrum[i] = fft.spectrum[i] }
        for i in 0..<(2 * frame) { fft.time[i] = errorHistory[i] * window[i] }
        fft.forward()
        let a = Self.coherenceSmoothing, b = 1 - Self.coherenceSmoothing
        var bandCoherence: Float = 0, bandEcho: Float = 0, bandMic: Float = 0
        // The residual's shares are learnt only while the far end plays (−80 dBFS or more).
        let learning = farEnergy > 1e-8 * Float(frame)
        let rate = Self.shareRate, hold = Self.powerSmoothing, take = 1 - Self.powerSmoothing
        for k in 0..<bins {
            let dr = micSpectrum[2 * k], di = micSpectrum[2 * k + 1]
            let er = fft.spectrum[2 * k], ei = fft.spectrum[2 * k + 1]
            let yr = dr - er, yi = di - ei
            let echo = yr * yr + yi * yi, error = er * er + ei * ei, heard = dr * dr + di * di
            echoPower[k] = hold * echoPower[k] + take * echo + Self.tiny
            errorPower[k] = hold * errorPower[k] + take * error + Self.tiny
            micPower[k] = hold * micPower[k] + take * heard + Self.tiny
            pathPower[k] = hold * pathPower[k] + take * pathNow[k] + Self.tiny
            // A ratio of averages, not an average of ratios: frames where the far end is faint
            // would otherwise swell the share many times over.
            if learning, micPower[k] < Self.echoDominance * echoPower[k], errorPower[k] < Self.learnsUnder * residual[k] {
                outOnPath[k] += rate * (errorPower[k] - outOnPath[k])
                pathOnPath[k] += rate * (pathPower[k] - pathOnPath[k])
                outOnEcho[k] += rate * (errorPower[k] - outOnEcho[k])
                echoOnEcho[k] += rate * (echoPower[k] - echoOnEcho[k])
            }
            sdd[k] = a * sdd[k] + b * heard
            syy[k] = a * syy[k] + b * echo
            syd[2 * k] = a * syd[2 * k] + b * (yr * dr + yi * di)
            syd[2 * k + 1] = a * syd[2 * k + 1] + b * (yi * dr - yr * di)
            if k >= bandLow, k <= bandHigh {
                bandCoherence += echoCoherence(k)
                bandEcho += syy[k]
                bandMic += sdd[k]
            }
            if mask != nil, k < EchoMask.bins {
                // The output as it will pass on: the microphone where the filter made a bin louder.
                let louder = error > heard
                maskMic[k] = powerScale * heard
                maskOut[k] = powerScale * (louder ? heard : error)
                maskEcho[k] = louder ? 0 : powerScale * echo
            }
        }
        if let mask, let maskState { runMask(mask, maskState) }
        // Where the microphone is mostly the echo estimate (they are coherent), suppress; where
        // the near end talks, the coherence falls and its speech passes. With the far end alone
        // (the speech band coherent throughout) the suppression is driven deeper.
        // (An echo estimate far under the microphone — nothing playing, or a filter still
        // learning — says nothing, however coherent its crumbs are.)
        let echoOnly = bandCoherence / Float(max(1, bandHigh - bandLow + 1)) > Self.echoOnlyCoherence
            && bandEcho > Self.leastEchoShare * bandMic
        let over = Float(pow(10, overestimateDB / 10)), floor = Float(pow(10, floorDB / 20))
        for k in 0..<bins {
            let pathShare = outOnPath[k] / pathOnPath[k]
            let echoShare = min(1, outOnEcho[k] / echoOnEcho[k])
            residual[k] = max(pathShare * pathPower[k], echoShare * echoPower[k])
            let wiener = max(0, 1 - over * residual[k] / errorPower[k])
            let coherent = echoOnly ? pow(1 - echoCoherence(k), Self.echoOnlyExponent) : 1
            let target = max(floor, min(wiener, coherent))
            gains[k] = Self.gainSmoothing * gains[k] + (1 - Self.gainSmoothing) * target
            let gain = mask == nil ? gains[k] : gains[k] * (k < EchoMask.bins ? maskGains[k] : maskAbove)
            // Never louder than the microphone: a bin the filter made louder gets the microphone.
            let er = fft.spectrum[2 * k], ei = fft.spectrum[2 * k + 1]
            let dr = micSpectrum[2 * k], di = micSpectrum[2 * k + 1]
            let louder = er * er + ei * ei > dr * dr + di * di
            let pr = louder ? dr : er, pi = louder ? di : ei
            var yr = gain * pr, yi = gain * pi
            // The room's noise where the suppressor took it (DC and Nyquist carry no phase to draw).
            if k > 0, k < bins - 1 {
                comfort?.fill(k, passed: pr * pr + pi * pi, echoFree: echoPower[k] < Self.faintEcho * errorPower[k], re: &yr, im: &yi)
            }
            fft.spectrum[2 * k] = yr
            fft.spectrum[2 * k + 1] = yi
        }
        comfort?.endFrame()
        fft.inverse()
        for i in 0..<frame {
            pending.push(overlap[i] + fft.time[i] * window[i])
            overlap[i] = fft.time[i + frame] * window[i + frame]
        }
    }

    /// The mask's gains for this frame, raised to `maskExponent`.
    private func runMask(_ mask: EchoMask, _ state: EchoMask.State) {
        maskMic.withUnsafeBufferPointer { m in
            maskOut.withUnsafeBufferPointer { o in
                maskEcho.withUnsafeBufferPointer { e in
                    maskGains.withUnsafeMutableBufferPointer { g in
                        mask.gains(microphone: m.baseAddress!, output: o.baseAddress!, echo: e.baseAddress!, state: state, into: g.baseAddress!)
                    }
                }
            }
        }
        // Bins above 8 kHz (at 48 kHz) share the mean gain of 4–8 kHz, as with the noise suppressor's network.
        var high: Float = 0
        for k in (EchoMask.bins / 2)..<EchoMask.bins { high += maskGains[k] }
        let exponent = Float(maskExponent)
        maskAbove = powf(high / Float(EchoMask.bins - EchoMask.bins / 2), exponent)
        for k in 0..<EchoMask.bins { maskGains[k] = powf(maskGains[k], exponent) }
    }

    /// Magnitude-squared coherence of the echo estimate and the microphone in bin k.
    @inline(__always) private func echoCoherence(_ k: Int) -> Float {
        let re = syd[2 * k], im = syd[2 * k + 1]
        return min(1, (re * re + im * im) / (syy[k] * sdd[k] + 1e-20))
    }
}

/// A fixed-capacity FIFO of samples, allocated once.
struct RingOfSamples {
    private var storage: [Float]
    private var head = 0, count = 0

    init(capacity: Int) { storage = [Float](repeating: 0, count: max(1, capacity)) }

    mutating func clear() { head = 0; count = 0 }

    mutating func push(_ x: Float) {
        storage[(head + count) % storage.count] = x
        count += 1
    }

    mutating func pop() -> Float {
        guard count > 0 else { return 0 }
        let x = storage[head]
        head = (head + 1) % storage.count
        count -= 1
        return x
    }
}
