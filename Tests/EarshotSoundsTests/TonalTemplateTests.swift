import EarshotCore
@testable import EarshotSounds
import EarshotTestSupport
import Foundation
import Testing

/// A two-note chime with three partials each, decaying, at 16 kHz; `ratio` moves its pitch.
private func chime(ratio: Double = 1, notes: [Double] = [880, 698.5], seconds: Double = 1.6) -> [Float] {
    (0..<Int(seconds * 16_000)).map { n -> Float in
        let t = Double(n) / 16_000
        var value = 0.0
        for (start, hertz) in zip([0.0, 0.6], notes) where t >= start {
            let u = t - start
            for k in 1...3 { value += 0.3 / Double(k) * exp(-2.5 * u) * sin(2 * .pi * hertz * ratio * Double(k) * u) }
        }
        return Float(value)
    }
}

/// `signal` placed at `onset` seconds into `seconds` of noise at `amplitude`.
private func scene(_ signal: [Float], onset: Double = 2, seconds: Double = 5, amplitude: Float = 0.003, seed: UInt64 = 9) -> [Float] {
    var out = noise(count: Int(seconds * 16_000), seed: seed, amplitude: amplitude)
    let first = Int(onset * 16_000)
    for (i, x) in signal.enumerated() where first + i < out.count { out[first + i] += x }
    return out
}

private func bestScore(_ template: TonalTemplate, _ samples: [Float]) -> Double {
    TonalScorer.best(of: [template], over: TonalPicture.frames(of: samples, tracksFloor: true))
}

@Suite struct TonalTemplateTests {
    /// The running diagonal sums give what the correlation, worked out in full for each
    /// stretch of the template and each pitch offset, gives.
    @Test func streamingScoreEqualsTheDirectCorrelation() throws {
        let template = try #require(TonalTemplate(clip: chime()))
        let bands = TonalPicture.bandCount
        let heard = TonalPicture.frames(of: scene(chime(ratio: 1.02), amplitude: 0.02), tracksFloor: true)
        let frames = heard.count / bands
        let length = template.frameCount, span = min(length, TonalScorer.window)
        var used = [Bool](repeating: false, count: bands)
        for k in 0..<length { for b in 0..<bands where template.frames[k * bands + b] > 0 { used[b] = true } }
        let mask = (0..<bands).map { b in (max(0, b - 2)...min(bands - 1, b + 2)).contains { used[$0] } }
        var scorer = TonalScorer(template)
        var checked = 0
        for t in 0..<frames {
            let streamed = scorer.push(Array(heard[(t * bands)..<((t + 1) * bands)]))
            guard t >= span - 1, t % 7 == 0 else { continue }
            var direct: Double = 0
            for offset in TonalScorer.offsets {
                for start in 0...(length - span) {
                    var dot = 0.0, templateEnergy = 0.0, streamEnergy = 0.0
                    for j in 0..<span {
                        for b in 0..<bands where mask[b] {
                            let x = Double(heard[(t - span + 1 + j) * bands + b])
                            let source = b - offset
                            let y = source >= 0 && source < bands ? Double(template.frames[(start + j) * bands + source]) : 0
                            dot += x * y
                            templateEnergy += y * y
                            streamEnergy += x * x
                        }
                    }
                    if templateEnergy > 0, streamEnergy > 0 { direct = max(direct, dot / (templateEnergy * streamEnergy).squareRoot()) }
                }
            }
            #expect(abs(Double(streamed) - direct) < 1e-3, "frame \(t): streamed \(streamed), direct \(direct)")
            checked += 1
        }
        #expect(checked > 20)
    }

    /// The chime heard again in a room's noise matches its template; half a semitone sharp it
    /// still does; a chime of other notes, or noise alone, does not.
    @Test func theSameChimeMatchesAndOthersDoNot() throws {
        let template = try #require(TonalTemplate(clip: chime()))
        let again = bestScore(template, scene(chime()))
        let sharp = bestScore(template, scene(chime(ratio: pow(2, 0.5 / 12))))
        let other = bestScore(template, scene(chime(notes: [523.3, 622.3])))
        let room = bestScore(template, noise(count: 80_000, seed: 5, amplitude: 0.05))
        #expect(again > 0.9, "again \(again)")
        #expect(sharp > 0.8, "half a semitone sharp \(sharp)")
        #expect(other < 0.4, "other notes \(other)")
        #expect(room < 0.3, "noise alone \(room)")
    }

    /// A second recording cut late — the first note missing — still lines up with the template's
    /// second half.
    @Test func aRecordingCutLateStillMatches() throws {
        let template = try #require(TonalTemplate(clip: chime()))
        let cut = Array(chime().dropFirst(Int(0.55 * 16_000)))
        #expect(bestScore(template, scene(cut)) > 0.85)
    }

    /// A knock or noise holds nothing tonal: no template, and the learned matcher listens alone.
    @Test func aKnockHasNoTonalTemplate() throws {
        var knock = [Float](repeating: 0, count: 16_000)
        let burst = noise(count: 400, seed: 2, amplitude: 0.8)
        for hit in [2000, 5000, 8000] { for i in 0..<400 { knock[hit + i] = burst[i] * Float(exp(-Double(i) / 60)) } }
        #expect(TonalTemplate(clip: knock)?.frameCount == nil)
        #expect(TonalTemplate(clip: noise(count: 16_000, seed: 3))?.frameCount == nil)
    }

    /// The tonal threshold stands above the impostor bank's best by the margin, and above what
    /// the user rejected, which is then not announced again.
    @Test func tonalThresholdStandsAboveTheBankAndTheRejected() throws {
        let embedding = try SoundEmbedding.bundled()
        let clip = [Float](repeating: 0, count: 4000) + chime() + [Float](repeating: 0, count: 4000)
        let sound = try SoundDetector.Sound(name: "bell", enrollments: [clip], negatives: [], embedding: embedding)
        #expect(sound.templates.count == 1)
        let bank = TonalScorer.best(of: sound.templates, over: ImpostorBank.tonalFrames)
        #expect(sound.tonalThreshold >= min(SoundDetector.Sound.highestThreshold, max(SoundDetector.Sound.tonalBaseThreshold, bank + SoundDetector.Sound.tonalBankMargin)) - 1e-9)
        // A televised copy, in the noise of its programme: rejected, not announced again (the
        // chime itself, rejected, would score over the highest threshold).
        let televised = scene(chime(ratio: 1.01), amplitude: 0.05, seed: 12)
        let rejected = try SoundDetector.Sound(name: "bell", enrollments: [clip], negatives: [televised], embedding: embedding)
        #expect(rejected.tonalThreshold >= min(SoundDetector.Sound.highestThreshold, bestScore(sound.templates[0], televised) + SoundDetector.Sound.negativeMargin) - 1e-9)
        // Nor does the two matchers' agreement bring the rejected recording back.
        #expect(sound.agreement == SoundDetector.agreement && rejected.agreement < sound.agreement)
        let detector = SoundDetector(sounds: [rejected], embedding: embedding)
        #expect((detector.push(televised[...]) + detector.finish()).isEmpty)
        let before = SoundDetector(sounds: [sound], embedding: embedding)
        #expect(!(before.push(televised[...]) + before.finish()).isEmpty, "the televised copy was found before it was rejected")
    }

    /// Both matchers together announce the same, at the same moments, whatever the block size.
    @Test func detectionsDoNotDependOnBlockSize() throws {
        let embedding = try SoundEmbedding.bundled()
        let clip = [Float](repeating: 0, count: 4000) + chime() + [Float](repeating: 0, count: 4000)
        let sound = try SoundDetector.Sound(name: "bell", enrollments: [clip], negatives: [], embedding: embedding)
        let heard = scene(chime(), seconds: 6, amplitude: 0.01) + scene(chime(ratio: 1.01), seconds: 6, amplitude: 0.02, seed: 4)
        var results: [[SoundDetection]] = []
        for size in [1600, 257, 4096] {
            let detector = SoundDetector(sounds: [sound], embedding: embedding)
            var found: [SoundDetection] = []
            for start in stride(from: 0, to: heard.count, by: size) { found += detector.push(heard[start..<min(heard.count, start + size)]) }
            results.append(found + detector.finish())
        }
        #expect(results[0].count == 2, "\(results[0])")
        #expect(results[1] == results[0] && results[2] == results[0])
    }

    /// Each matcher a little short of its threshold, both at once: announced together, by
    /// neither alone.
    @Test func twoMatchersAgreeingAnnounceWhatNeitherWouldAlone() throws {
        let embedding = try SoundEmbedding.bundled()
        let clip = [Float](repeating: 0, count: 4000) + chime() + [Float](repeating: 0, count: 4000)
        var sound = try SoundDetector.Sound(name: "bell", enrollments: [clip], negatives: [], embedding: embedding)
        let heard = scene(chime(), seconds: 6, amplitude: 0.01)
        let run = SoundDetector.scores(of: heard, sounds: [sound], embedding: embedding).scores[0].max() ?? 0
        let tonal = bestScore(sound.templates[0], heard)
        sound.threshold = run + 0.1
        sound.tonalThreshold = tonal + 0.1
        func found(_ matching: SoundDetector.Matching) -> Int {
            let detector = SoundDetector(sounds: [sound], embedding: embedding, matching: matching)
            return (detector.push(heard[...]) + detector.finish()).count
        }
        #expect(found(.embedding) == 0 && found(.tonal) == 0)
        #expect(found(.both) == 1, "run \(run), tonal \(tonal)")
    }
}
