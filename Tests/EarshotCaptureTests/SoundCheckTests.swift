@testable import EarshotCapture
import EarshotCore
import EarshotDSP
import Foundation
import Testing

/// Speech-like sound, seeded: voiced syllables (a gliding harmonic complex whose harmonics fall
/// about 9 dB an octave above 500 Hz, as read speech's spectrum does) and fricatives, between pauses.
func syntheticSpeech(seconds: Double, rate: Double = 16_000, levelDBFS: Double = -22, seed: UInt64 = 1) -> [Float] {
    var random = SeededRandom(seed: seed)
    let count = Int(seconds * rate)
    var out = [Float](repeating: 0, count: count)
    var n = Int(0.3 * rate)
    var phase = [Double](repeating: 0, count: 80)
    while n < count - Int(0.3 * rate) {
        let length = Int((0.12 + 0.2 * Double.random(in: 0..<1, using: &random)) * rate)
        let f0 = 100 + 120 * Double.random(in: 0..<1, using: &random), glide = (Double.random(in: 0..<1, using: &random) - 0.5) * 40
        let fricative = Double.random(in: 0..<1, using: &random) < 0.3
        var hold = 0.0, state = 0.0
        for i in 0..<min(length, count - n) {
            let t = Double(i) / Double(length)
            let envelope = sin(Double.pi * t)
            var value = 0.0
            if fricative {
                // Noise, gently high-passed.
                let white = random.nextGaussian()
                value = 0.1 * (white - 0.5 * hold)
                hold = white
            } else {
                let f = f0 + glide * t
                for h in 1..<phase.count where Double(h) * f < rate / 2 {
                    let hz = Double(h) * f
                    phase[h] += 2 * Double.pi * hz / rate
                    let tilt = hz < 500 ? 1 : pow(hz / 500, -1.5)
                    value += tilt * sin(phase[h])
                }
                state = 0.5 * state + 0.02 * random.nextGaussian()
                value = value * 0.2 + state
            }
            out[n + i] = Float(envelope * value)
        }
        n += length + Int((0.05 + (Double.random(in: 0..<1, using: &random) < 0.3 ? 0.4 : 0.08) * Double.random(in: 0..<1, using: &random)) * rate)
    }
    return scaled(out, toSpeechDBFS: levelDBFS)
}

/// Scaled so that its 10 ms frames within 15.9 dB of their mean power average `dbfs`.
func scaled(_ x: [Float], toSpeechDBFS dbfs: Double) -> [Float] {
    let frames = stride(from: 0, to: x.count - 160, by: 160).map { s in x[s..<(s + 160)].reduce(0.0) { $0 + Double($1) * Double($1) } / 160 }
    var level = frames.reduce(0, +) / Double(frames.count)
    for _ in 0..<20 {
        let active = frames.filter { $0 > level * pow(10, -1.59) }
        level = active.reduce(0, +) / Double(active.count)
    }
    let gain = Float(sqrt(pow(10, dbfs / 10) / level))
    return x.map { $0 * gain }
}

func whiteNoise(_ count: Int, dbfs: Double, seed: UInt64) -> [Float] {
    var random = SeededRandom(seed: seed)
    let sigma = pow(10, dbfs / 20)
    return (0..<count).map { _ in Float(sigma * random.nextGaussian()) }
}

func kinds(_ report: SoundCheckReport) -> Set<String> { Set(report.problems.map(\.kind.rawValue)) }

@Suite struct SoundCheckTests {
    let rate = 16_000.0
    let speech = syntheticSpeech(seconds: 10)
    let roomTone = whiteNoise(160_000, dbfs: -68, seed: 2)

    func check(_ x: [Float], rate: Double = 16_000) throws -> SoundCheckReport { try SoundCheck(x, sampleRate: rate).report }
    func plus(_ a: [Float], _ b: [Float]) -> [Float] { zip(a, b).map { $0 + $1 } }
    /// Mains hum as long as `speech`: the fundamental and the next two harmonics at `amplitudes`.
    func mainsHum(_ mains: Double, amplitudes: [Double]) -> [Float] {
        let lines = Array(zip(amplitudes, [0.0, 2, 1]).enumerated())
        return (0..<speech.count).map { n in
            let t = Double(n) / rate
            return Float(lines.reduce(0.0) { sum, line in
                sum + line.element.0 * sin(2 * Double.pi * Double(line.offset + 1) * mains * t + line.element.1)
            })
        }
    }

    @Test func cleanSpeechIsGoodAndMeasuredRight() throws {
        let report = try check(plus(speech, roomTone))
        #expect(report.verdict == .good, "\(report.problems)")
        #expect(abs(report.metrics.speechLevelDBFS - -22) < 1.5, "\(report.metrics)")
        #expect(report.metrics.bandwidthHz >= 7000)
        #expect(report.metrics.humHz == nil)
    }

    @Test func noiseAtAKnownSNR() throws {
        let report = try check(plus(speech, whiteNoise(speech.count, dbfs: -22 - 8, seed: 3)))
        #expect(kinds(report).contains("noisy"))
        #expect(abs(report.metrics.snrDB - 8) <= 3, "SNR \(report.metrics.snrDB)")
    }

    /// Knocks between the words are noise beside an echo too: the pause detector hears the echo
    /// as the talker's, so the noise is still read in the pauses, not as a low percentile that
    /// lies under every knock.
    @Test func knocksBesideAnEchoAreNoise() throws {
        let delay = Int(0.25 * rate)
        let echoed = speech.indices.map { $0 >= delay ? speech[$0] + 0.5 * speech[$0 - delay] : speech[$0] }
        var random = SeededRandom(seed: 7)
        var knocks = [Float](repeating: 0, count: speech.count)
        var at = Int(0.2 * rate)
        while at < knocks.count - 1600 {
            for i in 0..<1600 { knocks[at + i] = Float(random.nextGaussian() * exp(-Double(i) / 240)) }
            at += Int((0.4 + 0.6 * Double.random(in: 0..<1, using: &random)) * rate)
        }
        // 10 dB under the speech's active level, by the knocks' mean power.
        let power = knocks.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(knocks.count)
        let gain = Float((pow(10, (-22 - 10) / 10) / power).squareRoot())
        let report = try check(plus(plus(echoed, roomTone), knocks.map { $0 * gain }))
        #expect(kinds(report).isSuperset(of: ["echo", "noisy"]), "\(report.problems)")
        #expect(abs(report.metrics.snrDB - 10) <= 4, "SNR \(report.metrics.snrDB)")
    }

    /// Knocks that land only on the words, never between them, are noise all the same: read in
    /// the pauses alone, the noise is the room tone 46 dB under the speech.
    @Test func knocksUnderTheWordsAreNoise() throws {
        let power = stride(from: 0, to: speech.count - 160, by: 160).map { s in
            speech[s..<(s + 160)].reduce(0.0) { $0 + Double($1) * Double($1) } / 160
        }
        let loud = power.max()! * 0.1
        var random = SeededRandom(seed: 9)
        var knocks = [Float](repeating: 0, count: speech.count)
        var frame = 20
        while frame < power.count - 10 {
            guard power[frame] > loud else { frame += 1; continue }
            let at = frame * 160
            for i in 0..<min(1600, knocks.count - at) { knocks[at + i] = Float(random.nextGaussian() * exp(-Double(i) / 240)) }
            frame += Int(0.5 * rate / 160)
        }
        let knockPower = knocks.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(knocks.count)
        let gain = Float((pow(10, (-22 - 10) / 10) / knockPower).squareRoot())
        let report = try check(plus(plus(speech, roomTone), knocks.map { $0 * gain }))
        #expect(kinds(report).contains("noisy"), "\(report.problems)")
        // The suppressor hears them on the words: read within 4 dB of the 10 dB they were set at.
        #expect(abs(report.metrics.snrDB - 10) <= 4, "SNR \(report.metrics.snrDB)")
    }

    /// Shots on the loudest moments of the words, 2 s apart, 5 dB under the speech in mean power:
    /// each frame they land in is louder than the talker, so the pause network calls it the
    /// talker's and the suppressor keeps most of it; the share network is sure it is noise.
    @Test func shotsOnTheWordsAreNoise() throws {
        var random = SeededRandom(seed: 11)
        var shots = [Float](repeating: 0, count: speech.count)
        let loudest = stride(from: Int(rate), to: speech.count - Int(rate), by: Int(2 * rate)).map { start in
            (start..<(start + Int(rate))).max { abs(speech[$0]) < abs(speech[$1]) }!
        }
        for at in loudest {
            for i in 0..<min(2400, shots.count - at) { shots[at + i] = Float(random.nextGaussian() * exp(-Double(i) / 400)) }
        }
        let shotPower = shots.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(shots.count)
        let gain = Float((pow(10, (-22 - 5) / 10) / shotPower).squareRoot())
        let report = try check(plus(plus(speech, roomTone), shots.map { $0 * gain }))
        #expect(kinds(report).contains("noisy"), "\(report.problems)")
        // Within the 3 dB asked of the estimate; without the share network alone it reads 9.0.
        #expect(abs(report.metrics.snrDB - 5) <= 3, "SNR \(report.metrics.snrDB)")
    }

    /// Several inputs checked at once are ranked good before fix, then by fewer problems, then by
    /// the cleaner signal; the summary says the verdict, the numbers and each problem's fix.
    @Test func inputsAreRankedAndSummarised() throws {
        let clean = try check(plus(speech, roomTone))
        let noisy = try check(plus(speech, whiteNoise(speech.count, dbfs: -22 - 8, seed: 3)))
        let noisyAndQuiet = try check(plus(scaled(speech, toSpeechDBFS: -40), whiteNoise(speech.count, dbfs: -40 - 8, seed: 4)))
        #expect(noisyAndQuiet.problems.count > noisy.problems.count, "\(noisyAndQuiet.problems) against \(noisy.problems)")
        let ranked = SoundCheckReport.ranked([("far", noisyAndQuiet), ("near", noisy), ("headset", clean)])
        #expect(ranked.map(\.device) == ["headset", "near", "far"] && ranked.map(\.rank) == [1, 2, 3])
        let summary = noisy.summary(name: "near")
        #expect(summary.hasPrefix("near: needs fixing\n  speech "), "\(summary)")
        #expect(summary.contains("  noisy: ") && summary.contains("    fix: "), "\(summary)")
        #expect(clean.summary(name: "headset").hasPrefix("headset: sounds good"))
    }

    /// Quiet speech on a large offset: every loud moment is mostly offset, which is no rounded top.
    @Test func anOffsetIsNotClipping() throws {
        let report = try check(plus(scaled(speech, toSpeechDBFS: -46), roomTone).map { $0 + 0.1 })
        #expect(kinds(report).isSuperset(of: ["dc_offset", "too_quiet"]), "\(report.problems)")
        #expect(!kinds(report).contains("clipping"), "\(report.metrics)")
    }

    @Test func levelProblemsAtTheProductsThresholds() throws {
        let quiet = try check(plus(scaled(speech, toSpeechDBFS: -33), whiteNoise(speech.count, dbfs: -100, seed: 4)))
        #expect(kinds(quiet) == ["too_quiet"], "\(quiet.problems)")
        let problem = try #require(quiet.problems.first)
        #expect(problem.threshold == -31 && abs(problem.value - -33) < 1)
        #expect(kinds(try check(plus(scaled(speech, toSpeechDBFS: -29), whiteNoise(speech.count, dbfs: -100, seed: 4)))).isEmpty)
        // Peaks a hair under full scale, speech at -22 dBFS: loud peaks are not a fault.
        let peak = speech.map(abs).max()!
        #expect(kinds(try check(plus(speech.map { $0 / peak * 0.995 }, roomTone))).isEmpty)
    }

    @Test func aLoudLimitedRecordingIsTooLoudNotClipped() throws {
        let report = try check(limited(plus(scaled(speech, toSpeechDBFS: -11), roomTone), ceiling: 0.97))
        #expect(report.metrics.peakDBFS < 0)
        // Level and clipping only: this loud, the learned suppressor takes this synthetic talker's
        // white fricatives, over a white room tone, for noise on the words (18 dB). Of real
        // read speech it takes out as little at −11 dBFS as at −30 (docs/sound-check.md).
        #expect(kinds(report).subtracting(["noisy"]) == ["too_loud"], "\(report.problems) \(report.metrics)")
        #expect(report.problems.first { $0.kind == .tooLoud }?.threshold == -15)
    }

    @Test func hardClippingIsFlatTops() throws {
        // The converter clips what it hears, room tone included.
        let heard = plus(speech, roomTone)
        let limit = heard.map(abs).sorted()[heard.count * 99 / 100]
        let report = try check(heard.map { min(max($0, -limit), limit) / limit * 0.9 })
        #expect(kinds(report).contains("clipping"), "\(report.problems)")
        #expect(report.metrics.clippedShare > 0.005)
        #expect(report.problems.first { $0.kind == .clipping }?.threshold == SoundCheck.Threshold.clippedShare)
    }

    @Test func softClippingIsRoundedPeaksAndALimiterIsNot() throws {
        // Vowels whose harmonics have scattered phases, as a vocal tract leaves them (a crest of
        // about 2.5 in each cycle), in syllables.
        var random = SeededRandom(seed: 9)
        let phases = (1...12).map { _ in Double.random(in: 0..<(2 * Double.pi), using: &random) }
        let vowels = (0..<Int(10 * rate)).map { n -> Float in
            let t = Double(n) / rate
            let syllable = max(0, sin(2 * Double.pi * 2.5 * t))
            return Float(syllable * phases.enumerated().reduce(0.0) { $0 + sin(2 * Double.pi * 150 * Double($1.offset + 1) * t + $1.element) / Double($1.offset + 1) })
        }
        let heard = plus(scaled(vowels, toSpeechDBFS: -20), roomTone)
        let peak = heard.map(abs).max()!
        let saturated = try check(heard.map { Float(0.8 * tanh(4 * Double($0 / peak))) })
        #expect(saturated.metrics.roundedPeakShare >= SoundCheck.Threshold.roundedPeakShare, "\(saturated.metrics)")
        #expect(kinds(saturated).contains("clipping"), "\(saturated.problems)")
        let loud = try check(limited(plus(scaled(vowels, toSpeechDBFS: -10), roomTone), ceiling: 0.97))
        #expect(loud.metrics.roundedPeakShare < SoundCheck.Threshold.roundedPeakShare, "\(loud.metrics)")
        #expect(!kinds(loud).contains("clipping"), "\(loud.problems)")
    }

    /// A look-ahead limiter as a recorder's: the gain each sample needs, the least within 5 ms
    /// either side, averaged over 5 ms, so no sample passes `ceiling` and none is cut.
    func limited(_ x: [Float], ceiling: Float) -> [Float] {
        let need = x.map { min(1, ceiling / max(abs($0), 1e-12)) }
        let w = Int(0.005 * rate)
        let least = need.indices.map { n in need[max(0, n - w)...min(need.count - 1, n + w)].min()! }
        return x.indices.map { n in
            let window = least[max(0, n - w / 2)...min(least.count - 1, n + w / 2)]
            return x[n] * min(need[n], window.reduce(0, +) / Float(window.count))
        }
    }

    @Test func humIsFoundAtItsMainsFrequency() throws {
        for mains in [50.0, 60.0] {
            let hum = mainsHum(mains, amplitudes: [0.01, 0.004, 0.003])
            let report = try check(plus(plus(speech, roomTone), hum))
            #expect(report.metrics.humHz == mains)
            #expect(kinds(report).contains("hum"))
            // Its three lines together: (0.01² + 0.004² + 0.003²) / 2 is -42.0 dBFS, measured in the pauses.
            let detail = report.problems.first { $0.kind == .hum }?.detail ?? ""
            let level = detail.firstMatch(of: /at (-?[0-9.]+) dBFS/).flatMap { Double($0.1) }
            #expect(level.map { abs($0 + 42.0) < 1.5 } == true, "\(detail)")
        }
    }

    /// Hum 10 dB under the talker is most of the power of its quiet sounds, and the pause
    /// detector took those for pauses: the room tone read over the hum itself. Heard with
    /// the lines notched out, the pauses are the room's again, and the level is the talker's.
    @Test func loudHumIsNotTheRoomTone() throws {
        for mains in [50.0, 60.0] {
            let hum = mainsHum(mains, amplitudes: [0.03, 0.012, 0.009])
            // (0.03² + 0.012² + 0.009²) / 2 is −32.5 dBFS.
            let report = try check(plus(plus(speech, roomTone), hum))
            #expect(kinds(report).contains("hum"))
            #expect(report.metrics.noiseFloorDBFS < -37.5, "\(report.metrics)")
            #expect(abs(report.metrics.speechLevelDBFS + 22) < 1, "\(report.metrics)")
        }
    }

    /// The notches take a little of the talker with the hum (the harmonics that cross them), so
    /// the level is read beside them: the same talker reads the same with hum 14 dB down.
    @Test func humLeavesTheSpeechLevel() throws {
        let clean = try check(plus(speech, roomTone))
        // (0.02² + 0.008² + 0.006²) / 2 is −36.0 dBFS, 14 dB under the talker.
        for mains in [50.0, 60.0] {
            let hummed = try check(plus(plus(speech, roomTone), mainsHum(mains, amplitudes: [0.02, 0.008, 0.006])))
            #expect(kinds(hummed).contains("hum"), "\(hummed.problems)")
            #expect(abs(hummed.metrics.speechLevelDBFS - clean.metrics.speechLevelDBFS) <= 0.2,
                    "\(hummed.metrics.speechLevelDBFS) dBFS with hum, \(clean.metrics.speechLevelDBFS) without")
        }
    }

    /// The notches take the lines out and leave what lies between them.
    @Test func notchedHumLeavesTheRest() {
        let spectrum = { (x: [Float]) in PowerSpectrogram(x, sampleRate: rate, frameSeconds: 2, hopSeconds: 1) }
        let pauses = { (x: [Float]) in PowerSpectrogram(x, sampleRate: rate, frameSeconds: 0.5, hopSeconds: 0.25) }
        let lines = (0..<96_000).map { n -> Float in
            let t = Double(n) / rate
            return Float(0.05 * sin(2 * Double.pi * 50 * t) + 0.02 * sin(2 * Double.pi * 150 * t + 1))
        }
        let noise = whiteNoise(96_000, dbfs: -60, seed: 4)
        let x = plus(lines, noise)
        let hum = HumMeasure(spectrum(x), pauses: pauses(x))
        #expect(hum.fundamentalHz == 50)
        let notched = hum.notched(x, sampleRate: rate)
        func power(_ y: [Float]) -> Double { 10 * log10(y[16_000..<80_000].reduce(0.0) { $0 + Double($1) * Double($1) } / 64_000) }
        #expect(power(notched) - power(noise) < 0.5, "the lines are gone: \(power(notched)) against the noise's \(power(noise)) dBFS")
        let tone = (0..<96_000).map { Float(0.05 * sin(2 * Double.pi * 425 * Double($0) / rate)) }
        #expect(abs(power(hum.notched(tone, sampleRate: rate)) - power(tone)) < 0.1, "a tone between the lines stays")
    }

    @Test func faintHumIsMeasuredButNotAProblem() throws {
        // The same hum 8 dB further down (-50 dBFS) lies 28 dB under the speech: found, not reported.
        let hum = mainsHum(60, amplitudes: [0.004, 0.0016, 0.0012])
        let report = try check(plus(plus(speech, roomTone), hum))
        #expect(report.metrics.humHz == 60)
        #expect(!kinds(report).contains("hum"), "\(report.problems)")
    }

    @Test func narrowChannelAndCoveredMicrophone() throws {
        let clean = plus(speech, roomTone)
        // A telephone channel: everything above 3.4 kHz removed.
        let narrow = try check(filtered(clean) { $0 <= 3400 ? 1 : 0 })
        #expect(kinds(narrow) == ["narrowband"], "\(narrow.problems)")
        #expect(abs(narrow.metrics.bandwidthHz - 3400) < 500, "\(narrow.metrics.bandwidthHz)")
        // A covered microphone: 30 dB less from an octave above 1.2 kHz, nothing removed.
        let muffled = try check(filtered(clean) { hz in pow(10, -30 * min(1, max(0, log2(max(hz, 1) / 1200))) / 20) })
        #expect(kinds(muffled) == ["muffled"], "\(muffled.problems)")
        // A dull take under a cover, shaped as such LibriSpeech takes measure against read speech:
        // 20 dB down by 3.2 kHz, steeply on to 40 dB down at 4.5 kHz, and level from there. It
        // levels off, so it is a cover, however deep; the same fall going on down is a channel's.
        let take: [(hz: Double, db: Double)] = [(1500, 0), (2000, -8), (2900, -14), (3200, -22), (3600, -32),
                                                (4000, -37), (4500, -40)]
        func shape(_ hz: Double, beyond: (Double) -> Double) -> Double {
            if hz <= take[0].hz { return 1 }
            guard let upper = take.firstIndex(where: { $0.hz >= hz }) else { return pow(10, beyond(hz) / 20) }
            let (a, b) = (take[upper - 1], take[upper])
            return pow(10, (a.db + (b.db - a.db) * log2(hz / a.hz) / log2(b.hz / a.hz)) / 20)
        }
        let deepCover = try check(filtered(clean) { shape($0) { _ in -40 } })
        #expect(kinds(deepCover) == ["muffled"], "\(deepCover.problems) \(deepCover.metrics.bandwidthHz)")
        let channel = try check(filtered(clean) { shape($0) { hz in -40 - 120 * log2(hz / 4500) } })
        #expect(kinds(channel) == ["narrowband"], "\(channel.problems)")
    }

    @Test func aWidebandChannelInAFortyEightKilohertzRecordingIsNotNarrow() throws {
        // A 16 kHz channel (nothing above 8 kHz) recorded at 48 kHz, from a dull voice (12 dB less
        // per octave above 2 kHz): the channel ends at 8 kHz, wide enough, and the voice's slope
        // under the cliff is not the cliff.
        let wide = 48_000.0
        let take = plus(syntheticSpeech(seconds: 10, rate: wide), whiteNoise(480_000, dbfs: -68, seed: 2))
        let dull = filtered(take, rate: wide) { hz in hz > 8000 ? 0 : pow(10, -12 * max(0, log2(max(hz, 1) / 2000)) / 20) }
        let report = try check(dull, rate: wide)
        #expect(!kinds(report).contains("narrowband"), "\(report.problems)")
        #expect(abs(report.metrics.bandwidthHz - 8000) < 1000, "\(report.metrics.bandwidthHz)")
    }

    @Test func dcDropoutsAndEcho() throws {
        let clean = plus(speech, roomTone)
        let offset = try check(clean.map { $0 + 0.05 })
        #expect(kinds(offset).contains("dc_offset"))
        #expect(abs(offset.metrics.dcOffset - 0.05) < 0.002, "\(offset.metrics)")
        // Speech clipped on one side only has a mean while it lasts, but sits centred in its pauses.
        let ceiling = 0.2 * clean.reduce(Float(0)) { max($0, $1) }
        let lopsided = try check(clean.map { min($0, ceiling) })
        #expect(!kinds(lopsided).contains("dc_offset"), "\(lopsided.metrics)")
        #expect(abs(lopsided.metrics.dcOffset) < 0.002, "\(lopsided.metrics)")
        var gapped = clean
        // Three 40 ms gaps where the speech is loudest.
        let loudest = stride(from: 8000, to: clean.count - 8000, by: 1600).sorted { abs(clean[$0]) > abs(clean[$1]) }.prefix(3)
        for start in loudest { for i in start..<(start + 640) { gapped[i] = 0 } }
        let report = try check(gapped)
        #expect(kinds(report).contains("dropouts"), "\(report.problems)")
        #expect(!kinds(report).contains("noisy"), "a gap's cut edges are no noise: \(report.metrics)")
        let delay = Int(0.2 * rate)
        let echoed = clean.indices.map { $0 >= delay ? clean[$0] + 0.5 * clean[$0 - delay] : clean[$0] }
        let echo = try check(echoed)
        #expect(kinds(echo).contains("echo"), "\(echo.problems)")
        #expect(echo.problems.first { $0.kind == .echo }!.detail.contains("200 ms"))
    }

    @Test func digitalSilenceBetweenTakesIsAnEdit() throws {
        // Two takes joined by 200 ms of digital silence, the room tone 22 dB under the speech on
        // both sides of the join: an edit, not a dropout. The same silence cut into a word is one.
        let take = plus(speech, whiteNoise(speech.count, dbfs: -44, seed: 3))
        var pause = (start: 0, length: 0), start = 0
        for i in Int(rate)..<speech.count {
            if speech[i] != 0 { start = i + 1 } else if i - start + 1 > pause.length { pause = (start, i - start + 1) }
        }
        #expect(pause.length > Int(0.1 * rate))
        let silence = [Float](repeating: 0, count: Int(0.2 * rate))
        let join = pause.start + pause.length / 2
        let spliced = try check(Array(take[..<join]) + silence + Array(take[join...]))
        #expect(!kinds(spliced).contains("dropouts"), "\(spliced.problems)")
        let word = (Int(rate)..<(speech.count - Int(rate))).max { abs(speech[$0]) < abs(speech[$1]) }!
        let cut = try check(Array(take[..<word]) + silence + Array(take[word...]))
        #expect(kinds(cut).contains("dropouts"), "\(cut.problems)")
    }

    @Test(arguments: [1.2, 1.8]) func reverberationTimeOfARoom(rt60: Double) throws {
        var random = SeededRandom(seed: 9)
        var room = (0..<Int(rt60 * rate)).map { n in Float(random.nextGaussian() * exp(-6.91 * Double(n) / rate / rt60)) }
        let energy = room.reduce(0) { $0 + $1 * $1 }
        room = room.map { $0 / energy.squareRoot() }
        room[0] += 0.7
        let dry = speech
        var wet = [Float](repeating: 0, count: dry.count)
        for (i, x) in dry.enumerated() where x != 0 {
            for (j, h) in room.enumerated() where i + j < wet.count { wet[i + j] += x * h }
        }
        let report = try check(plus(wet, roomTone))
        let measured = try #require(report.metrics.rt60Seconds)
        #expect(abs(measured - rt60) < 0.35, "RT60 \(measured)")
        #expect(kinds(report).contains("reverberant"))
        // The tails that fill the pauses are the room's sound, not its noise.
        #expect(!kinds(report).contains("noisy"), "SNR \(report.metrics.snrDB)")
        let dryReport = try check(plus(dry, roomTone))
        #expect(!kinds(dryReport).contains("reverberant"), "\(String(describing: dryReport.metrics.rt60Seconds))")
    }

    @Test func badInputIsRefused() {
        #expect(throws: CaptureError.self) { try SoundCheck([Float](repeating: 0.1, count: 8000), sampleRate: 16_000) }
        var poisoned = speech
        poisoned[500] = .nan
        #expect(throws: CaptureError.self) { try SoundCheck(poisoned, sampleRate: 16_000) }
        #expect(throws: EarshotError.self) { try SoundCheck(speech, sampleRate: 0) }
        // Longer than a take: refused, not held in memory.
        #expect(throws: CaptureError.self) { try SoundCheck([Float](repeating: 0.1, count: 601_000), sampleRate: 1_000) }
    }

    @Test func silenceHasNoSpeech() throws {
        let report = try check([Float](repeating: 0, count: 32_000))
        #expect(report.verdict == .fix)
        #expect(kinds(report) == ["too_quiet"])
    }

    /// Zero-phase filtering by a gain per frequency, through one long FFT.
    func filtered(_ x: [Float], rate: Double = 16_000, gain: (Double) -> Double) -> [Float] {
        let fft = RealFFT(size: RealFFT.fastSize(atLeast: x.count), planning: .estimate)
        fft.time.update(repeating: 0)
        for i in x.indices { fft.time[i] = x[i] }
        fft.forward()
        for k in 0..<fft.binCount {
            let g = Float(gain(Double(k) * rate / Double(fft.size)))
            fft.spectrum[2 * k] *= g
            fft.spectrum[2 * k + 1] *= g
        }
        fft.inverse()
        return Array(fft.time[0..<x.count])
    }
}
