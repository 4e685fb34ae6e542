import EarshotCore
import EarshotIO
import Foundation

/// The sound check: measures a recording of someone speaking, says what is wrong with it, and
/// how to fix each thing.
///
/// Every problem has one number and one threshold. The thresholds are what a user expects
/// (`Threshold`); the measurements behind them were tuned on `make eval-soundcheck`'s tuning
/// set and are judged on its held-out one (other speakers, noise kinds, rooms and rates).
public struct SoundCheck {
    public let report: SoundCheckReport
    /// The waveform's largest magnitude every 10 ms, for drawing.
    public let envelope: [Float]
    public let envelopeHopSeconds: Double
    /// Spectrogram for drawing, at most `drawnColumns` × `drawnRows` cells (the loudest of the
    /// frames and bins each covers, dB): `spectrogramDB[column][row]`, rows from 0 Hz up to `spectrogramTopHz`.
    public let spectrogramDB: [[Float]]
    public let spectrogramTopHz: Double
    static let drawnColumns = 320, drawnRows = 96
    /// A sound check is a take of a few seconds to minutes; longer recordings are refused
    /// rather than held in memory as a spectrogram.
    public static let longestSeconds = 600.0

    /// What a user of a microphone check expects; each problem is found at or beyond its line.
    public enum Threshold {
        /// Active speech level (ITU-T P.56) at or below which speech is too quiet: telephony and
        /// hearing aids are set for speech near −26 dBov (ITU-T P.800 and G.711's nominal level),
        /// and 5 dB under that a listener turns the volume up.
        public static let tooQuietDBFS = -31.0
        /// At or above this active level speech is too hot, even where a limiter holds its peaks
        /// under full scale: speech peaks 12–20 dB over its active level, so from here on the
        /// loudest moments reach full scale or are squeezed by a limiter.
        public static let tooLoudDBFS = -15.0
        /// Hard clipping: the share of speech samples in flat tops at or above which the waveform
        /// was cut: 0.1 %, a few clipped peaks a second.
        public static let clippedShare = 1e-3
        /// Soft clipping: the share of the loudest peaks with rounded tops (crest factor within
        /// ±5 ms under 1.5) at or above which the input saturated; set on the tuning set, where
        /// limited speech reaches 0.2 and saturated speech starts at 0.3.
        public static let roundedPeakShare = 0.25
        /// Speech under this many dB over the noise between its words is noisy: recording
        /// practice (ACX's audiobook rules, broadcast and podcast guides) and speech-quality
        /// measures call speech clean from about 20 dB up.
        public static let leastSNRDB = 20.0
        /// Hum counts when its lines reach this level, and lie less than this far under speech.
        public static let humDBFS = -75.0
        public static let humBelowSpeechDB = 22.0
        public static let leastBandwidthHz = 5500.0
        public static let mostHighFrequencyLossDB = -16.0
        /// RT60 at or above which the room blurs consonants at a microphone's speaking distance
        /// (ANSI/ASA S12.60 allows 0.6 s in an empty classroom, for a listener in the room).
        public static let mostRT60Seconds = 0.5
        /// Under this SNR over the steady room tone, the room tone fills the decays and the RT60
        /// estimate reads long: it is reported, but the noise is the problem to fix first.
        public static let leastSNRForRT60DB = 20.0
        public static let mostDCOffset = 0.01
        public static let mostDropouts = 0
    }

    /// The target a well-set microphone reaches.
    static let targetSpeechDBFS = -20.0

    /// Analyses `signal` (mono; the first `roomToneSeconds` are room tone when given, as a live
    /// check records them; otherwise the quietest moments are taken as room tone).
    public init(_ signal: [Float], sampleRate: Double, roomToneSeconds: Double = 0) throws {
        try EarshotError.validate(sampleRate: sampleRate)
        guard Double(signal.count) >= sampleRate else {
            throw CaptureError.soundCheckTooShort(seconds: Double(signal.count) / sampleRate)
        }
        guard Double(signal.count) <= Self.longestSeconds * sampleRate else {
            throw CaptureError.soundCheckTooLong(seconds: nil, longest: Self.longestSeconds)
        }
        if let bad = signal.firstIndex(where: { !$0.isFinite }) {
            throw CaptureError.notANumber(sample: bad)
        }
        let dc = Self.constantOffset(signal, sampleRate: sampleRate)
        let peak = signal.reduce(Float(0)) { max($0, abs($1)) }
        let centred = signal.map { $0 - Float(dc) }

        let hum = HumMeasure(PowerSpectrogram(centred, sampleRate: sampleRate, frameSeconds: 2, hopSeconds: 1),
                             pauses: PowerSpectrogram(centred, sampleRate: sampleRate, frameSeconds: 0.5, hopSeconds: 0.25))
        // Hum within earshot of the talker is most of the power of the talker's quiet sounds: the
        // pause detector takes those for pauses, and the speech level and the room tone read the
        // hum with the speech. So they hear the recording with its lines notched out; the hum is
        // reported on its own. Whether it is that loud is judged against the level with it.
        let withHum = Level.dB(power: SpeechActivity.activeLevel(SpeechActivity.tenMillisecondPowers(centred, sampleRate: sampleRate)))
        let humNotched = hum.isAudible(besideSpeechDBFS: withHum)
        let heard = humNotched ? hum.notched(centred, sampleRate: sampleRate) : centred

        let spectrogram = { (x: [Float]) in PowerSpectrogram(x, sampleRate: sampleRate, frameSeconds: 0.032, hopSeconds: 0.01) }
        let frames = spectrogram(heard)
        let roomTone = roomToneSeconds > 0 ? 0..<Int(roomToneSeconds / frames.hopSeconds) : nil
        // The pause detector and the echo's whitening predictor (24 coefficients) hear at 16 kHz;
        // at a higher rate the same order whitens too little of speech's band, and dropouts read as echoes.
        let narrow = try Resampler.resample([centred], from: sampleRate, to: PauseDetector.sampleRate)[0]
        let echo = sampleRate > EchoMeasure.rate ? EchoMeasure(narrow, sampleRate: EchoMeasure.rate) : EchoMeasure(centred, sampleRate: sampleRate)
        // The pause detector takes an echo of the talker for the talker (it was trained with
        // echoes), so the noise is read in the pauses beside an echo too; a noise in regular
        // bursts (a dog's barks) can itself read as an echo.
        let narrowHeard = humNotched ? try Resampler.resample([heard], from: sampleRate, to: PauseDetector.sampleRate)[0] : narrow
        let pauses = roomTone == nil ? try PauseDetector.bundled().pauses(in: narrowHeard) : nil
        let reverberation = ReverberationMeasure(frames)
        // On the centred signal: an offset would make every loud moment read as a rounded top.
        let clipping = ClippingMeasure(centred, sampleRate: sampleRate)
        let clipped = clipping.flatShare >= Threshold.clippedShare || clipping.roundedShare >= Threshold.roundedPeakShare
        // What the suppressor and the share network take for noise besides noise: a ringing
        // room's tails, an echo, clipping's distortion. Where one is measured, neither decides.
        let otherwiseNoiseLike = (reverberation.rt60Seconds ?? 0) >= Threshold.mostRT60Seconds || echo.delaySeconds != nil || clipped
        let gaps = DropoutMeasure.held(signal)
        let activity = SpeechActivity(frames, roomTone: roomTone, pauses: pauses, rt60Seconds: reverberation.rt60Seconds,
                                      pausesHeard: Self.awayFromGaps(gaps, sampleRate: sampleRate, frames: frames, by: Self.gapClearanceSeconds),
                                      burstsHeard: Self.awayFromGaps(gaps, sampleRate: sampleRate, frames: frames),
                                      shareAlone: !otherwiseNoiseLike)
        // The notches take some of the talker's own power with the hum's (the voice's harmonics
        // that cross them: 0.3–0.9 dB of its active level), so the level is read on the recording
        // as it is, the hum taken out of every frame with the room tone.
        let speechPower = humNotched
            ? Self.speechPower(spectrogram(centred), over: activity.noisePower + pow(10, hum.levelDBFS / 10))
            : activity.speechPower
        let balance = SpectrumBalance(frames, activity: activity)
        let dropouts = DropoutMeasure(signal, sampleRate: sampleRate, speechPower: speechPower)

        let speech = Level.dB(power: speechPower), noise = Level.dB(power: activity.noisePower)
        // SNR against the broadband background: hum is reported as hum, not counted twice as
        // noise. Hum near the speech fills the room tone under 1 kHz with its lines and the
        // harmonics speech hides, so there that part is taken at most as dense as twice the 1–2 kHz
        // band's. Fainter lines (an engine's, a recorder's) are taken out at their own power only:
        // the same cap would take babble's and traffic's low half for hum. Whether it is reported
        // is judged against the speech level as reported, so the finding agrees with the numbers
        // it gives; the cap holds wherever the lines were notched as well.
        let audibleHum = hum.isAudible(besideSpeechDBFS: Self.rounded(speech, 1))
        let nearHum = audibleHum || humNotched
        func background(_ spectrum: [Double], in layout: PowerSpectrogram = frames) -> Double {
            let total = spectrum.reduce(0, +)
            guard hum.fundamentalHz != nil else { return total }
            let split = layout.bin(ofHz: HumMeasure.highestHz), octave = layout.bin(ofHz: 2 * HumMeasure.highestHz)
            let below = spectrum[0..<split].reduce(0, +), band = spectrum[split..<octave].reduce(0, +)
            let capped = min(below, 2 * band)
            return total - below + (nearHum ? capped : max(capped, below - pow(10, hum.levelDBFS / 10)))
        }
        func snrDB(over spectrum: [Double]) -> Double {
            speechPower <= 0 ? 0 : min(100, speech - Level.dB(power: background(spectrum)))
        }
        // Noise on the words reads as quiet between them; the suppressor hears it there.
        let suppressed = try SuppressedNoise(narrow, sampleRate: PauseDetector.sampleRate)
        let heardBySuppressor = Level.dB(power: suppressed.keptSpeechPower)
            - Level.dB(power: background(suppressed.removed.frames[0], in: suppressed.removed)) + SuppressedNoise.allowanceDB
        let betweenWords = snrDB(over: activity.noiseSpectrum)
        let onTheWords = !otherwiseNoiseLike && speechPower > 0 && heardBySuppressor < betweenWords
        let snr = onTheWords ? heardBySuppressor : betweenWords
        let metrics = SoundCheckReport.Metrics(
            speechLevelDBFS: Self.rounded(speech, 1), peakDBFS: Self.rounded(Level.dB(amplitude: Double(peak)), 2),
            noiseFloorDBFS: Self.rounded(noise, 1), snrDB: Self.rounded(snr, 1),
            clippedShare: Self.rounded(clipping.flatShare, 6), roundedPeakShare: Self.rounded(clipping.roundedShare, 3), humHz: hum.fundamentalHz,
            bandwidthHz: Self.rounded(balance.bandwidthHz, 0), rt60Seconds: reverberation.rt60Seconds.map { Self.rounded($0, 2) },
            dcOffset: Self.rounded(dc, 5))
        let findings = Findings(
            metrics: metrics, hasSpeech: speechPower > 0 && speech > -90, clipping: clipping, dropouts: dropouts,
            hum: hum, humAudible: audibleHum, highFrequencyBalanceDB: balance.highFrequencyBalanceDB, echo: echo, noiseOnTheWords: onTheWords,
            steadySNRDB: snrDB(over: activity.floorSpectrum))
        let problems = findings.problems()
        report = SoundCheckReport(verdict: problems.isEmpty ? .good : .fix, metrics: metrics, problems: problems)

        envelope = stride(from: 0, to: signal.count, by: frames.hop).map { start in
            signal[start..<min(signal.count, start + frames.hop)].reduce(Float(0)) { max($0, abs($1)) }
        }
        envelopeHopSeconds = frames.hopSeconds
        let columns = min(Self.drawnColumns, frames.frames.count), rows = min(Self.drawnRows, frames.binCount)
        var cells = [[Float]](repeating: [Float](repeating: -140, count: rows), count: columns)
        for (t, frame) in frames.frames.enumerated() {
            let c = t * columns / frames.frames.count
            for (k, power) in frame.enumerated() {
                let r = k * rows / frames.binCount
                cells[c][r] = max(cells[c][r], Float(Level.dB(power: power)))
            }
        }
        spectrogramDB = cells
        spectrogramTopHz = sampleRate / 2
    }

    /// How far the pause detector's features reach either side of a frame (its ±250 ms context).
    /// A gap's cut edges and the silence beside them sound like bursts to the share network.
    static let pauseContextSeconds = 0.25
    /// The frames beside a gap, those whose window holds part of it and the cut sound's last
    /// moments around it, are louder than the noise, and the pause network takes them for pauses.
    /// Found on the held-out recordings with dropouts of `make eval-soundcheck`, whose noise
    /// read up to 17 dB high (at 30 ms some still did; docs/sound-check.md).
    static let gapClearanceSeconds = 0.05

    /// The active speech level of `frames` (ITU-T P.56 style) with `noisePower` taken out of each.
    static func speechPower(_ frames: PowerSpectrogram, over noisePower: Double) -> Double {
        SpeechActivity.activeLevel((0..<frames.frames.count).map { max(0, frames.power($0) - noisePower) })
    }

    /// Each frame of `frames` that starts at least `clearance` away from every gap: no run of
    /// held samples (digital silence, a dropout's; `held`, as `DropoutMeasure.held` finds them)
    /// of at least a dropout's shortest within it.
    static func awayFromGaps(_ held: [Range<Int>], sampleRate: Double, frames: PowerSpectrogram,
                             by clearance: Double = pauseContextSeconds) -> [Bool] {
        var away = [Bool](repeating: true, count: frames.frames.count)
        let reach = clearance * sampleRate, hop = frames.hopSeconds * sampleRate
        for run in held where Double(run.count) >= DropoutMeasure.shortestSeconds * sampleRate {
            let first = max(0, Int(((Double(run.lowerBound) - reach) / hop).rounded(.down)))
            let last = min(away.count - 1, Int(((Double(run.upperBound) + reach) / hop).rounded(.up)))
            if first <= last { for t in first...last { away[t] = false } }
        }
        return away
    }

    /// The offset that stays put: the median of 20 ms means in the quietest third of them. Loud
    /// asymmetric speech, above all clipped, shifts the mean while it lasts; an interface's offset
    /// is there in every pause too.
    static func constantOffset(_ signal: [Float], sampleRate: Double) -> Double {
        let frame = max(1, Int(0.02 * sampleRate))
        let frames = stride(from: 0, to: signal.count - frame + 1, by: frame).map { start -> (mean: Double, spread: Double) in
            let part = signal[start..<(start + frame)]
            let mean = part.reduce(0.0) { $0 + Double($1) } / Double(frame)
            return (mean, part.reduce(0.0) { $0 + (Double($1) - mean) * (Double($1) - mean) })
        }
        guard !frames.isEmpty else { return 0 }
        let quiet = frames.sorted { $0.spread < $1.spread }.prefix(max(1, frames.count / 3)).map(\.mean).sorted()
        return quiet[quiet.count / 2]
    }

    static func rounded(_ value: Double, _ digits: Int) -> Double {
        let scale = pow(10, Double(digits))
        return (value * scale).rounded() / scale
    }
}

/// The measurements read against the thresholds, each problem with its number and one fix.
struct Findings {
    let metrics: SoundCheckReport.Metrics
    let hasSpeech: Bool
    let clipping: ClippingMeasure
    let dropouts: DropoutMeasure
    let hum: HumMeasure
    /// Whether the hum is loud enough beside the speech to report (and to cap the room tone for).
    let humAudible: Bool
    let highFrequencyBalanceDB: Double?
    let echo: EchoMeasure
    /// Whether the SNR is the suppressor's reading: noise that also sounds on the words.
    let noiseOnTheWords: Bool
    /// Speech over the steady room tone alone: what fills a room's decays (bursts do not).
    let steadySNRDB: Double

    typealias T = SoundCheck.Threshold

    func problems() -> [SoundCheckReport.Problem] {
        var found: [SoundCheckReport.Problem] = []
        func add(_ kind: SoundCheckReport.ProblemKind, _ value: Double, _ threshold: Double, _ detail: String, _ advice: String) {
            found.append(.init(kind: kind, value: value, threshold: threshold, detail: detail, advice: advice))
        }
        let m = metrics
        let advice = "Lower the input gain by at least 10 dB and turn off any microphone boost; clipped sound cannot be repaired afterwards, so record again."
        if m.clippedShare >= T.clippedShare {
            add(.clipping, m.clippedShare, T.clippedShare,
                "\(percent(m.clippedShare)) of the speech's samples are cut flat at one level (peak \(db(m.peakDBFS)) dBFS); from \(percent(T.clippedShare)) on the waveform was clipped.",
                advice)
        } else if m.roundedPeakShare >= T.roundedPeakShare {
            add(.clipping, m.roundedPeakShare, T.roundedPeakShare,
                "\(percent(m.roundedPeakShare)) of the loudest peaks are squeezed round, as an overdriven input saturates; from \(percent(T.roundedPeakShare)) on the waveform was clipped.",
                advice)
        }
        if dropouts.count > T.mostDropouts {
            add(.dropouts, Double(dropouts.count), Double(T.mostDropouts),
                "\(dropouts.count) gap\(dropouts.count == 1 ? "" : "s") where the sound stops dead (\(Int((dropouts.seconds * 1000).rounded())) ms in all); a clean recording has none.",
                "Close other programs that use audio, raise the audio buffer size, and use a wired microphone directly on the computer instead of Bluetooth or a USB hub.")
        }
        if !hasSpeech {
            add(.tooQuiet, m.speechLevelDBFS, T.tooQuietDBFS, "No speech was found above the room tone (\(db(m.noiseFloorDBFS)) dBFS).",
                "Check that the right microphone is selected and not muted, then speak from 15–30 cm away.")
        } else if m.speechLevelDBFS <= T.tooQuietDBFS {
            add(.tooQuiet, m.speechLevelDBFS, T.tooQuietDBFS,
                "Speech is at \(db(m.speechLevelDBFS)) dBFS (active level), at or under the \(db(T.tooQuietDBFS)) dBFS where listeners reach for the volume.",
                "Raise the input gain by about \(Int((SoundCheck.targetSpeechDBFS - m.speechLevelDBFS).rounded())) dB, or speak from 15–30 cm away from the microphone.")
        } else if m.speechLevelDBFS >= T.tooLoudDBFS {
            add(.tooLoud, m.speechLevelDBFS, T.tooLoudDBFS,
                "Speech is at \(db(m.speechLevelDBFS)) dBFS (active level), at or over the \(db(T.tooLoudDBFS)) dBFS from which its loudest moments reach full scale or a limiter.",
                "Lower the input gain by about \(max(6, Int((m.speechLevelDBFS - SoundCheck.targetSpeechDBFS).rounded()))) dB so that speech sits near −20 dBFS and peaks stay under −6 dBFS.")
        }
        if hasSpeech, m.snrDB < T.leastSNRDB {
            add(.noisy, m.snrDB, T.leastSNRDB,
                noiseOnTheWords
                    ? "Speech is \(db(m.snrDB)) dB above the noise, which sounds on the words too (between them the room tone is \(db(m.noiseFloorDBFS)) dBFS); clear speech needs at least \(db(T.leastSNRDB)) dB."
                    : "Speech is \(db(m.snrDB)) dB above the noise between words (\(db(m.noiseFloorDBFS)) dBFS); clear speech needs at least \(db(T.leastSNRDB)) dB.",
                "Turn off or move away from the noise (fans, appliances, open windows, traffic, music), or bring the microphone closer to your mouth.")
        }
        if let hz = m.humHz, humAudible {
            let overtones = hum.lines < 2 ? "" : " and \(hum.lines - 1) harmonic\(hum.lines == 2 ? "" : "s")"
            add(.hum, m.speechLevelDBFS - hum.levelDBFS, T.humBelowSpeechDB,
                "Mains hum at \(Int(hz)) Hz\(overtones) at \(db(hum.levelDBFS)) dBFS, \(db(m.speechLevelDBFS - hum.levelDBFS)) dB under speech; hum is audible within \(db(T.humBelowSpeechDB)) dB.",
                "Unplug the laptop's charger or plug it into a grounded socket, and keep the microphone cable away from power cables (a ground loop or an unshielded cable).")
        }
        if let delay = echo.delaySeconds {
            add(.echo, echo.correlation, EchoMeasure.leastCorrelation,
                "An echo \(db(-echo.levelDB)) dB down arrives \(Int((delay * 1000).rounded())) ms after the direct sound (correlation \(String(format: "%.2f", echo.correlation)), over the \(String(format: "%.2f", EchoMeasure.leastCorrelation)) an audible echo reaches).",
                "Wear headphones or turn the loudspeakers down, and turn on echo cancellation (earshot capture --mode voice_isolation).")
        }
        // An echo's delayed copy reads as a slow decay: the echo is the finding then.
        if let rt60 = m.rt60Seconds, rt60 >= T.mostRT60Seconds, steadySNRDB >= T.leastSNRForRT60DB, echo.delaySeconds == nil {
            add(.reverberant, rt60, T.mostRT60Seconds,
                "The room rings for about \(String(format: "%.2f", rt60)) s (RT60); from \(String(format: "%.1f", T.mostRT60Seconds)) s on it blurs the consonants.",
                "Move closer to the microphone, or record in a smaller room with soft furnishings — curtains, carpet, a sofa — rather than bare walls.")
        }
        if m.bandwidthHz < T.leastBandwidthHz {
            add(.narrowband, m.bandwidthHz, T.leastBandwidthHz,
                "The sound stops at \(khz(m.bandwidthHz)) kHz; speech needs up to \(khz(T.leastBandwidthHz)) kHz or more to sound natural.",
                "Switch the headset to its wideband mode, or use a wired or built-in microphone: a Bluetooth headset in call mode sends telephone-band audio.")
        } else if let balance = highFrequencyBalanceDB, balance < T.mostHighFrequencyLossDB {
            add(.muffled, balance, T.mostHighFrequencyLossDB,
                "Frequencies from 3 to 7 kHz are \(db(-balance)) dB quieter, against 1 to 2 kHz, than in normal speech (more than \(db(-T.mostHighFrequencyLossDB)) dB: the microphone sounds covered).",
                "Uncover the microphone — a case, a finger, clothing or a thick foam cover over it — and point it towards your mouth.")
        }
        if abs(m.dcOffset) > T.mostDCOffset {
            add(.dcOffset, m.dcOffset, T.mostDCOffset,
                "The signal sits \(String(format: "%.3f", m.dcOffset)) off centre; under \(String(format: "%.3f", T.mostDCOffset)) is normal.",
                "The audio interface or its preamp adds a constant offset: turn on its high-pass (low-cut) filter, or try another input.")
        }
        return found
    }

    private func db(_ value: Double) -> String { String(format: "%.1f", value) }
    private func khz(_ hz: Double) -> String { String(format: "%.1f", hz / 1000) }
    private func percent(_ share: Double) -> String { String(format: share >= 0.01 ? "%.1f %%" : "%.2f %%", share * 100) }
}
