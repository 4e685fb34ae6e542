import EarshotCapture
import EarshotCore
import EarshotTestSupport
import Foundation
import Testing

@Suite struct EchoCancellerTests {
    let rate = 16_000.0

    /// Runs the canceller over whole signals in blocks of 256; returns the cleaned microphone.
    func cancel(mic: [Float], far: [Float], canceller: EchoCanceller = EchoCanceller()) throws -> [Float] {
        try canceller.prepare(ProcessSpec(sampleRate: rate, maximumBlockFrames: 256, channelCount: 2))
        let buffer = AudioBuffer(channels: [mic, far])
        var out: [Float] = []
        var start = 0
        while start < mic.count {
            let count = min(256, mic.count - start)
            var block = buffer.block().frames(from: start, count: count)
            canceller.process(&block)
            out.append(contentsOf: block.channel(0))
            start += count
        }
        return out
    }

    /// Far-end "speech": noise shaped into syllables, so the filter also meets pauses.
    func talker(seconds: Double, seed: UInt64) -> [Float] {
        let x = noise(count: Int(seconds * rate), seed: seed, amplitude: 0.2)
        return x.indices.map { i in x[i] * Float(max(0, sin(Double(i) / rate * 2 * Double.pi * 2.5))) }
    }

    /// The far end through a loudspeaker `delaySeconds` late into a small room.
    func echo(of far: [Float], delaySeconds: Double = 0.12, room seed: UInt64 = 4) -> [Float] {
        var random = SeededRandom(seed: seed)
        let delay = Int(delaySeconds * rate)
        var room = [Float](repeating: 0, count: 1600)
        room[0] = 0.6
        for n in 1..<room.count { room[n] = Float(0.05 * random.nextGaussian() * exp(-Double(n) / 300)) }
        var out = [Float](repeating: 0, count: far.count)
        for i in far.indices where far[i] != 0 {
            for (j, h) in room.enumerated() where i + delay + j < out.count { out[i + delay + j] += far[i] * h }
        }
        return out
    }

    /// Echo return loss enhancement over `span` of the microphone, the output read `latency` later.
    func erle(_ mic: [Float], _ out: [Float], _ span: Range<Int>, latency: Int) -> Double {
        20 * log10(rms(mic[span]) / rms(out[(span.lowerBound + latency)..<(span.upperBound + latency)]))
    }

    /// The canceller on `far`'s echo through `before` until 8 s and through `after` from then on,
    /// over faint noise: ERLE once settled (5–8 s) and over `relearnt` (seconds) after the move.
    func erleAcrossAMove(far: [Float], before: [Float], after: [Float], canceller: EchoCanceller,
                         relearnt: Range<Double>) throws -> (settled: Double, relearnt: Double) {
        let change = Int(8 * rate)
        let mic = zip(far.indices.map { $0 < change ? before[$0] : after[$0] }, noise(count: far.count, seed: 2, amplitude: 0.0005)).map { $0 + $1 }
        let out = try cancel(mic: mic, far: far, canceller: canceller)
        let latency = canceller.latencySamples
        return (erle(mic, out, Int(5 * rate)..<change, latency: latency),
                erle(mic, out, Int(relearnt.lowerBound * rate)..<Int(relearnt.upperBound * rate), latency: latency))
    }

    @Test func keepsTheProcessorContract() throws {
        try expectKept(ProcessorContract(sampleRate: rate, channelCount: 2) { EchoCanceller() })
        try expectKept(ProcessorContract(sampleRate: rate, channelCount: 2) { EchoCanceller(maskExponent: 0) })
        try expectKept(ProcessorContract(sampleRate: rate, channelCount: 2) { EchoCanceller(maskExponent: 0.5) })
        try expectKept(ProcessorContract(sampleRate: 48_000, channelCount: 2) { EchoCanceller(maskExponent: 0.5) })
        try expectKept(ProcessorContract(sampleRate: rate, channelCount: 2) { EchoCanceller(comfortNoiseDB: 0) })
        try expectKept(ProcessorContract(sampleRate: 48_000, channelCount: 2) { EchoCanceller(comfortNoiseDB: 0) })
        // Narrowing (after 1 s of far end, 2 s of this talker) and the steps after it keep it too.
        let far = talker(seconds: 4, seed: 1)
        try expectKept(ProcessorContract(sampleRate: rate, channelCount: 2, input: [echo(of: far, delaySeconds: 0.2), far]) {
            EchoCanceller(tailSeconds: 1, pathSeconds: 0.3)
        })
    }

    @Test func removesTheEchoOfALateLoudspeaker() throws {
        let far = talker(seconds: 8, seed: 1)
        let mic = zip(echo(of: far), noise(count: far.count, seed: 2, amplitude: 0.0005)).map { $0 + $1 }
        let out = try cancel(mic: mic, far: far)
        let last = (far.count - 3 * Int(rate))..<far.count
        let erle = 20 * log10(rms(mic[last]) / rms(out[last]))
        #expect(erle > 15, "ERLE \(erle) dB")
    }

    @Test func leavesTheNearEndAloneWhenNothingPlays() throws {
        let near = talker(seconds: 4, seed: 3)
        let canceller = EchoCanceller()
        let out = try cancel(mic: near, far: [Float](repeating: 0, count: near.count), canceller: canceller)
        let latency = canceller.latencySamples
        #expect(Double(latency) / rate <= 0.010, "at most 10 ms")
        let span = Int(rate)..<(near.count - latency)
        let difference = 20 * log10(rms(out[(span.lowerBound + latency)..<(span.upperBound + latency)]) / rms(near[span]))
        #expect(abs(difference) < 1, "near end changed by \(difference) dB")
    }

    /// A microphone hearing `echo`, faint noise and, from `start` on, `talk` (its syllables 0.2 s
    /// late, so they fall between the far end's); returns it and the near end alone.
    func doubleTalk(echo: [Float], talk: [Float], from start: Int) -> (mic: [Float], near: [Float]) {
        let near = echo.indices.map { $0 >= start ? talk[$0 - Int(0.2 * rate)] : 0 }
        let mic = zip(zip(echo, near).map { $0 + $1 }, noise(count: echo.count, seed: 2, amplitude: 0.0005)).map { $0 + $1 }
        return (mic, near)
    }

    @Test func suppressesDeeperWhileTheFarEndPlaysAloneAndKeepsTheNearEndInDoubleTalk() throws {
        let far = talker(seconds: 12, seed: 1)
        let start = Int(8 * rate)
        // The near end talks from 8 s on, its syllables between the far end's. The suppressor's
        // gains move over about 50 ms, so a syllable's onset right after the far end's loses a
        // little: up to 3 dB of level is allowed, and the distortion is held to −8 dB.
        // (The suppressor alone: the learned mask also lowers a near end that is not speech.)
        let (mic, near) = doubleTalk(echo: echo(of: far), talk: talker(seconds: 12, seed: 5), from: start)
        let canceller = EchoCanceller(maskExponent: 0)
        let out = try cancel(mic: mic, far: far, canceller: canceller)
        let latency = canceller.latencySamples
        let reduction = erle(mic, out, Int(5 * rate)..<start, latency: latency)
        let both = (start + Int(rate))..<(far.count - latency)
        let kept = out[(both.lowerBound + latency)..<(both.upperBound + latency)]
        let loss = 20 * log10(rms(near[both]) / rms(kept))
        let difference = zip(kept, near[both]).map { $0 - $1 }
        let error = 20 * log10(rms(difference[...]) / rms(near[both]))
        #expect(reduction > 20, "ERLE \(reduction) dB with the far end alone")
        #expect(abs(loss) < 3, "the near end's level changed by \(loss) dB in double talk")
        #expect(error < -8, "what is left of the echo and the near end's distortion: \(error) dB")
    }

    /// The far end through a small loudspeaker driven into saturation: tanh of three times the
    /// signal, then a cabinet resonance (a two-pole filter at about 1 kHz), then the room.
    func distortedEcho(of far: [Float]) -> [Float] {
        let peak = far.map(abs).max() ?? 1
        var y1: Float = 0, y2: Float = 0
        let r: Float = 0.95, c = Float(2 * cos(2 * Double.pi * 1000 / rate))
        let driven = far.map { x -> Float in
            let u = tanh(3 * x / peak) * peak
            let y = u + 0.3 * (c * r * y1 - r * r * y2)
            y2 = y1; y1 = y
            return y
        }
        return echo(of: driven)
    }

    @Test func suppressesTheEchoALinearFilterCannotModel() throws {
        let far = talker(seconds: 10, seed: 1)
        let mic = zip(distortedEcho(of: far), noise(count: far.count, seed: 2, amplitude: 0.0005)).map { $0 + $1 }
        let filterAlone = EchoCanceller(floorDB: 0, maskExponent: 0), canceller = EchoCanceller(maskExponent: 0)
        let last = (far.count - 4 * Int(rate))..<(far.count - Int(0.01 * rate))
        let linear = erle(mic, try cancel(mic: mic, far: far, canceller: filterAlone), last, latency: filterAlone.latencySamples)
        let suppressed = erle(mic, try cancel(mic: mic, far: far, canceller: canceller), last, latency: canceller.latencySamples)
        #expect(linear < 20, "the scene should defeat a linear filter: \(linear) dB")
        #expect(suppressed > linear + 10, "with the suppressor \(suppressed) dB, the filter alone \(linear) dB")
    }

    /// `overestimateDB` trades the near end for echo: assuming more residual than measured takes
    /// more of what the linear filter leaves of a distorted loudspeaker.
    @Test func anOverestimateTakesMoreOfTheResidual() throws {
        let far = talker(seconds: 10, seed: 1)
        let mic = zip(distortedEcho(of: far), noise(count: far.count, seed: 2, amplitude: 0.0005)).map { $0 + $1 }
        let usual = EchoCanceller(overestimateDB: 0, maskExponent: 0), bolder = EchoCanceller(overestimateDB: 10, maskExponent: 0)
        let last = (far.count - 4 * Int(rate))..<(far.count - Int(0.01 * rate))
        let measured = erle(mic, try cancel(mic: mic, far: far, canceller: usual), last, latency: usual.latencySamples)
        let over = erle(mic, try cancel(mic: mic, far: far, canceller: bolder), last, latency: bolder.latencySamples)
        #expect(over > measured + 3, "10 dB over the measured residual: \(over) dB, as measured \(measured) dB")
    }

    /// Voiced "speech", which the learned mask was trained to keep: syllables of a glottal pulse
    /// train at 100–220 Hz through three vowel formants, 120–300 ms long with gaps between.
    func voice(seconds: Double, seed: UInt64) -> [Float] {
        let vowels: [[Double]] = [[730, 1090, 2440], [270, 2290, 3010], [300, 870, 2240], [530, 1840, 2480], [570, 840, 2410]]
        var random = SeededRandom(seed: seed)
        func uniform() -> Double { Double.random(in: 0..<1, using: &random) }
        var out = [Float](repeating: 0, count: Int(seconds * rate))
        var start = Int(0.1 * rate)
        while start < out.count {
            let length = Int((0.12 + 0.18 * uniform()) * rate)
            let pitch = 100 + 120 * uniform(), formants = vowels[Int(uniform() * 5) % 5]
            var phase = 0.0, states = [[Double]](repeating: [0, 0], count: 3)
            for n in 0..<min(length, out.count - start) {
                phase += pitch * (1 - 0.2 * Double(n) / Double(length)) / rate
                let pulse = phase >= 1 ? 1.0 : 0
                phase -= floor(phase)
                var y = 0.0
                for (i, f) in formants.enumerated() {
                    let r = exp(-Double.pi * 120 / rate), c = 2 * r * cos(2 * Double.pi * f / rate)
                    let v = pulse + c * states[i][0] - r * r * states[i][1]
                    states[i] = [v, states[i][0]]
                    y += v / Double(i + 1)
                }
                out[start + n] = Float(y * sin(Double.pi * Double(n) / Double(length)))
            }
            start += length + Int((0.05 + 0.15 * uniform()) * rate)
        }
        let peak = out.map(abs).max() ?? 1
        return out.map { 0.3 * $0 / peak }
    }

    /// The learned mask takes more of what the suppressor leaves of a distorted loudspeaker, and
    /// in double talk keeps the near end.
    @Test func theLearnedMaskTakesMoreOfWhatTheSuppressorLeaves() throws {
        let far = voice(seconds: 14, seed: 1)
        let start = Int(10 * rate)
        let (mic, near) = doubleTalk(echo: distortedEcho(of: far), talk: voice(seconds: 14, seed: 5), from: start)
        let alone = (start - 4 * Int(rate))..<start, both = (start + Int(rate))..<(far.count - Int(0.01 * rate))
        func measured(_ canceller: EchoCanceller) throws -> (erle: Double, nearLoss: Double) {
            let out = try cancel(mic: mic, far: far, canceller: canceller)
            let latency = canceller.latencySamples
            let kept = out[(both.lowerBound + latency)..<(both.upperBound + latency)]
            return (erle(mic, out, alone, latency: latency), 20 * log10(rms(near[both]) / rms(kept)))
        }
        let without = try measured(EchoCanceller(maskExponent: 0)), with = try measured(EchoCanceller(maskExponent: 0.5))
        #expect(with.erle > without.erle + 5, "far end alone: \(with.erle) dB with the mask, \(without.erle) dB without")
        #expect(with.nearLoss < without.nearLoss + 3, "near end in double talk \(with.nearLoss) dB down with the mask, \(without.nearLoss) dB without")
    }

    @Test func neverComesOutLouderThanTheMicrophone() throws {
        // The loudspeaker falls silent at 6 s while the far end goes on: the learnt path now
        // predicts an echo that is not there, and the filter's output alone would add it.
        let far = talker(seconds: 10, seed: 1)
        let silent = Int(6 * rate)
        let heard = echo(of: far).enumerated().map { $0.offset < silent ? $0.element : 0 }
        let mic = zip(heard, noise(count: far.count, seed: 2, amplitude: 0.003)).map { $0 + $1 }
        for canceller in [EchoCanceller(), EchoCanceller(floorDB: 0, maskExponent: 0), EchoCanceller(maskExponent: 1),
                          EchoCanceller(comfortNoiseDB: 0)] {
            let out = try cancel(mic: mic, far: far, canceller: canceller)
            let latency = canceller.latencySamples, window = Int(0.5 * rate)
            var worst = -Double.infinity
            for start in stride(from: 0, to: mic.count - window - latency, by: window / 2) {
                worst = max(worst, -erle(mic, out, start..<(start + window), latency: latency))
            }
            #expect(worst < 0.5, "a half second came out \(worst) dB louder than the microphone (floor \(canceller.floorDB) dB)")
        }
    }

    @Test func comfortNoiseKeepsTheRoomWhileTheEchoIsTaken() throws {
        // The far end plays for 8 s over a room's steady noise, then stops: the room alone is
        // the level the background should keep while the echo is taken. (The suppressor alone:
        // the learned mask also lowers a near end that is not speech, this white noise.)
        let far = talker(seconds: 8, seed: 1) + [Float](repeating: 0, count: Int(3 * rate))
        let room = noise(count: far.count, seed: 2, amplitude: 0.003)
        let mic = zip(echo(of: far), room).map { $0 + $1 }
        func background(_ canceller: EchoCanceller) throws -> (whileEcho: Double, alone: Double) {
            let out = try cancel(mic: mic, far: far, canceller: canceller)
            let latency = canceller.latencySamples
            let echoing = Int(4 * rate)..<Int(8 * rate), quiet = Int(9 * rate)..<(far.count - latency)
            func level(_ span: Range<Int>) -> Double {
                20 * log10(rms(out[(span.lowerBound + latency)..<(span.upperBound + latency)]) / rms(room[span]))
            }
            return (level(echoing), level(quiet))
        }
        let without = try background(EchoCanceller(maskExponent: 0, comfortNoiseDB: nil))
        let with = try background(EchoCanceller(maskExponent: 0, comfortNoiseDB: 0))
        #expect(abs(with.alone) < 1 && abs(without.alone) < 1, "the room alone passes: \(with.alone), \(without.alone) dB")
        #expect(without.whileEcho < -10, "without comfort noise the room drops out while the echo is taken: \(without.whileEcho) dB")
        #expect(with.whileEcho > -6 && with.whileEcho < 1, "with it, the room stays: \(with.whileEcho) dB against the room alone")
    }

    @Test func learnsTheEchoPathItselfAndFollowsItWhenItChanges() throws {
        // Suppression off: what is measured is the adaptive filter alone.
        let far = talker(seconds: 16, seed: 1)
        let (settled, relearnt) = try erleAcrossAMove(
            far: far, before: echo(of: far), after: echo(of: far, delaySeconds: 0.05, room: 9),
            canceller: EchoCanceller(floorDB: 0, maskExponent: 0), relearnt: 12.5..<15.5)
        #expect(settled > 25, "the filter alone: ERLE \(settled) dB")
        #expect(relearnt > 20, "after the loudspeaker moved: ERLE \(relearnt) dB")
    }

    @Test func cancelsTheEchoOfAMicrophoneDrivenIntoClipping() throws {
        // The echo so loud that the microphone cuts its peaks at full scale (1 % of samples):
        // no linear path explains what it heard, and the filter alone must still cancel it.
        let far = talker(seconds: 8, seed: 1)
        var loud = echo(of: far)
        let peak = loud.map { abs($0) }.sorted()[loud.count * 99 / 100]
        loud = loud.map { $0 / peak }
        let mic = zip(loud, noise(count: far.count, seed: 2, amplitude: 0.0005)).map { min(1, max(-1, $0 + $1)) }
        let clipped = mic.filter { abs($0) >= 1 }.count
        #expect(clipped > mic.count / 200, "the scene clips \(clipped) samples")
        let canceller = EchoCanceller(floorDB: 0, maskExponent: 0)
        let out = try cancel(mic: mic, far: far, canceller: canceller)
        let latency = canceller.latencySamples
        let reduction = erle(mic, out, Int(5 * rate)..<(far.count - latency), latency: latency)
        #expect(reduction > 30, "the filter alone on a clipped microphone: ERLE \(reduction) dB")
    }

    @Test func aLongFilterNarrowsToWhereThePathLiesAndLearnsAsFastAsAShortOne() throws {
        // Live, the filter spans 1 s because the loudspeaker's delay is not known; here it is
        // 0.45 s. Told the path fits in 0.3 s, it finds it and learns from then on as a 0.3 s
        // filter would (the filter alone, suppression off).
        let far = talker(seconds: 10, seed: 1)
        let mic = zip(echo(of: far, delaySeconds: 0.45), noise(count: far.count, seed: 2, amplitude: 0.0005)).map { $0 + $1 }
        func reduction(_ canceller: EchoCanceller) throws -> Double {
            erle(mic, try cancel(mic: mic, far: far, canceller: canceller), Int(4 * rate)..<Int(7 * rate), latency: canceller.latencySamples)
        }
        let wide = try reduction(EchoCanceller(tailSeconds: 1, floorDB: 0, maskExponent: 0))
        let narrowed = try reduction(EchoCanceller(tailSeconds: 1, pathSeconds: 0.3, floorDB: 0, maskExponent: 0))
        #expect(narrowed > wide + 6, "narrowed \(narrowed) dB, wide \(wide) dB")
    }

    @Test func aNarrowedFilterStartsAgainWhenThePathMovesOutOfItsSpan() throws {
        // The loudspeaker's delay jumps from 0.1 to 0.5 s, outside the 0.3 s the filter narrowed
        // to: it must see it has lost the path, start again, find it and cancel it. (The talker's
        // syllables come every 0.4 s: a jump of 0.6 s would put the old prediction in the new
        // echo's pauses, which speech does not do.)
        let far = talker(seconds: 20, seed: 1)
        let (settled, relearnt) = try erleAcrossAMove(
            far: far, before: echo(of: far, delaySeconds: 0.1), after: echo(of: far, delaySeconds: 0.5),
            canceller: EchoCanceller(tailSeconds: 1, pathSeconds: 0.3, floorDB: 0, maskExponent: 0), relearnt: 16..<19.5)
        #expect(settled > 25, "before the jump: ERLE \(settled) dB")
        #expect(relearnt > 20, "after the jump: ERLE \(relearnt) dB")
    }

    @Test func aNarrowedFilterKeepsItsPathWhileTheNearEndTalksAlone() throws {
        // A conversation: the far end talks for 5 s, then the near end alone for 3 s, then the far
        // end again. Near-end talk with no echo predicted is not a lost path: the far end's return
        // is cancelled at once (the filter alone, suppression off).
        // The far end's pause is a recording's: faint room tone, not digital silence.
        let talk = talker(seconds: 11, seed: 1), other = talker(seconds: 11, seed: 5), tone = noise(count: talk.count, seed: 9, amplitude: 0.001)
        let pause = Int(5 * rate)..<Int(8 * rate)
        let far = talk.indices.map { pause.contains($0) ? tone[$0] : talk[$0] }
        let near = talk.indices.map { pause.contains($0) ? other[$0] : 0 }
        let mic = zip(zip(echo(of: far, delaySeconds: 0.2), near).map { $0 + $1 }, noise(count: far.count, seed: 2, amplitude: 0.0005)).map { $0 + $1 }
        let canceller = EchoCanceller(tailSeconds: 1, pathSeconds: 0.3, floorDB: 0, maskExponent: 0)
        let out = try cancel(mic: mic, far: far, canceller: canceller)
        let returned = erle(mic, out, Int(8.3 * rate)..<Int(9.3 * rate), latency: canceller.latencySamples)
        #expect(returned > 25, "the first second after the far end returns: ERLE \(returned) dB")
    }

    /// The far end through a loudspeaker whose clock runs `ppm` fast, `delaySeconds` late: each
    /// microphone sample reads the far end a little earlier (linear interpolation).
    func drifted(_ far: [Float], ppm: Double, delaySeconds: Double) -> [Float] {
        far.indices.map { n in
            let t = Double(n) / (1 + ppm * 1e-6) - delaySeconds * rate
            let i = Int(t.rounded(.down)), f = Float(t - Double(i))
            guard i >= 0, i + 1 < far.count else { return 0 }
            return 0.7 * ((1 - f) * far[i] + f * far[i + 1])
        }
    }

    @Test func readsClockDriftAndNotAMovedLoudspeaker() {
        let far = talker(seconds: 30, seed: 6)
        let noisy = { (x: [Float]) in zip(x, noise(count: x.count, seed: 7, amplitude: 0.002)).map { $0 + $1 } }
        let fast = EchoDelay.drift(mic: noisy(drifted(far, ppm: 100, delaySeconds: 0.08)), far: far, sampleRate: rate)
        #expect(fast.map { abs($0 - 100e-6) < 10e-6 } == true, "100 ppm read as \((fast ?? .nan) * 1e6) ppm")
        let slow = EchoDelay.drift(mic: noisy(drifted(far, ppm: -60, delaySeconds: 0.2)), far: far, sampleRate: rate)
        #expect(slow.map { abs($0 + 60e-6) < 10e-6 } == true, "-60 ppm read as \((slow ?? .nan) * 1e6) ppm")
        #expect(EchoDelay.drift(mic: noisy(drifted(far, ppm: 0, delaySeconds: 0.08)), far: far, sampleRate: rate) == nil)
        // The loudspeaker moved from 80 to 200 ms half way: a jump, not a clock.
        let half = far.count / 2, near = drifted(far, ppm: 0, delaySeconds: 0.08), away = drifted(far, ppm: 0, delaySeconds: 0.2)
        #expect(EchoDelay.drift(mic: noisy(Array(near[..<half] + away[half...])), far: far, sampleRate: rate) == nil)
    }

    @Test func refusesWhatItCannotServe() {
        #expect(throws: CaptureError.self) { try EchoCanceller().prepare(ProcessSpec(sampleRate: 16_000, maximumBlockFrames: 64, channelCount: 1)) }
        #expect(throws: CaptureError.self) { try EchoCanceller().prepare(ProcessSpec(sampleRate: 96_000, maximumBlockFrames: 64, channelCount: 2)) }
    }
}
