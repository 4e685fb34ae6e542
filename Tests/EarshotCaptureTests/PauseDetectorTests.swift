@testable import EarshotCapture
import EarshotCore
import Foundation
import Testing

@Suite struct PauseDetectorTests {
    struct Reference: Decodable {
        let features: [[Double]]
        let frames: [Int]
        let pause_probability: [Double]
        let noise_share: [Double]
    }

    /// `training/train_pauses.py`'s `fixture_signal`, made alike here.
    static func referenceSignal() -> [Float] {
        let rate = 16_000.0
        var state: UInt64 = 12345
        return (0..<48_000).map { n in
            let t = Double(n) / rate
            state = (1_664_525 * state + 1_013_904_223) % (1 << 32)
            let uniform = Double(state) / Double(1 << 32) - 0.5
            var voiced = 0.0
            for h in 1..<12 { voiced += sin(2 * .pi * 140 * Double(h) * t) / Double(h) }
            voiced *= sin(2 * .pi * 2 * t) > 0.2 ? 1 : 0
            return Float(0.05 * voiced + uniform * (0.05 + (abs(t - 1.3) < 0.1 ? 0.5 : 0)))
        }
    }

    @Test func featuresAndProbabilitiesMatchTheReference() throws {
        let url = try #require(Bundle.module.url(forResource: "pauses", withExtension: "json", subdirectory: "Fixtures"))
        let reference = try JSONDecoder().decode(Reference.self, from: Data(contentsOf: url))
        let signal = Self.referenceSignal()
        let detector = try PauseDetector.bundled()
        let (features, _) = detector.features(signal)
        let probabilities = detector.pauseProbabilities(in: signal)
        #expect(probabilities.count == reference.pause_probability.count)
        for (row, t) in reference.frames.enumerated() {
            for (k, value) in reference.features[row].enumerated() {
                #expect(abs(features[t][k] - value) < 2e-3, "frame \(t), feature \(k): \(features[t][k]) against \(value)")
            }
        }
        for (t, p) in reference.pause_probability.enumerated() {
            #expect(abs(probabilities[t] - p) < 2e-3, "frame \(t): \(probabilities[t]) against \(p)")
        }
        #expect(Set(reference.pause_probability.map { $0 > 0.5 }).count == 2, "the reference signal has pauses and speech")
        let shares = detector.pauses(in: signal).noiseShare
        #expect(shares.count == probabilities.count)
        for (row, t) in reference.frames.enumerated() {
            #expect(abs(shares[t] - reference.noise_share[row]) < 2e-3, "frame \(t): noise share \(shares[t]) against \(reference.noise_share[row])")
        }
    }

    @Test func aModelOfAnotherShapeIsRefused() throws {
        // A safetensors file whose first layer takes 44 values, not 45.
        let tensors: [(String, [Int])] = [("band_edges", [20, 2]), ("layer0.weight", [4, 44]), ("layer0.bias", [4])]
        var header: [String: Any] = [:], offset = 0
        for (name, shape) in tensors {
            let bytes = 4 * shape.reduce(1, *)
            header[name] = ["dtype": "F32", "shape": shape, "data_offsets": [offset, offset + bytes]]
            offset += bytes
        }
        let json = try JSONSerialization.data(withJSONObject: header)
        var data = Data()
        withUnsafeBytes(of: UInt64(json.count).littleEndian) { data.append(contentsOf: $0) }
        data.append(json)
        data.append(Data(count: offset))
        #expect(throws: ModelError.self) { try PauseDetector(SafeTensors(data: data)) }
    }

    /// The noise is the mean over the talker's pauses, bursts included; the low percentile
    /// reads the quiet under the bursts instead; under 0.5 s of sure pauses the likely ones stand
    /// in if they last 1 s, and under that it is the percentile.
    @Test func theNoiseIsTheMeanOverThePauses() {
        let rate = 16_000.0
        var signal = whiteNoise(64_000, dbfs: -70, seed: 3)
        let burst = whiteNoise(64_000, dbfs: -30, seed: 4)
        for n in 0..<16_000 { signal[n] += Float(0.1 * sin(2 * .pi * 300 * Double(n) / rate)) }
        for n in 48_000..<64_000 { signal[n] += Float(0.1 * sin(2 * .pi * 300 * Double(n) / rate)) }
        for n in 24_000..<27_200 { signal[n] += burst[n] }  // 0.2 s in the 2 s pause
        let frames = PowerSpectrogram(signal, sampleRate: rate, frameSeconds: 0.032, hopSeconds: 0.01)
        func marks(_ range: Range<Int>) -> [Bool] { (0..<frames.frames.count).map { range.contains($0) } }
        let none = marks(0..<0)
        let measured = SpeechActivity(frames, pauses: .init(sure: marks(100..<290), likely: marks(100..<290)))
        let expected = (100..<290).map { frames.power($0) }.reduce(0, +) / 190
        #expect(abs(10 * log10(measured.noisePower / expected)) < 0.01)
        #expect(10 * log10(measured.noisePower) > -42, "the bursts count: \(10 * log10(measured.noisePower)) dBFS")
        #expect(10 * log10(measured.floorSpectrum.reduce(0, +)) < -60, "the steady floor stays under the bursts")

        let percentile = SpeechActivity(frames)
        #expect(10 * log10(percentile.noisePower) < -60)
        let likely = SpeechActivity(frames, pauses: .init(sure: marks(100..<120), likely: marks(100..<290)))
        #expect(abs(10 * log10(likely.noisePower / expected)) < 0.01, "1.9 s of likely pauses stand in for 0.2 s of sure ones")
        let tooFew = SpeechActivity(frames, pauses: .init(sure: marks(100..<120), likely: marks(100..<190)))
        #expect(tooFew.noisePower == percentile.noisePower, "0.2 s of sure pauses and 0.9 s of likely ones are too little to measure")
        #expect(SpeechActivity(frames, pauses: .init(sure: none, likely: none)).noisePower == percentile.noisePower)
        #expect(SpeechActivity(frames, roomTone: 0..<0).noisePower == percentile.noisePower, "a room tone of no frames is none")
    }

    /// Where too few pauses are found, the room tone is each bin's low percentile; the quieter
    /// 2nd percentile stands for it only in a room that rings (its tails fill the 10th). A noise
    /// with a few short gaps (a door, typing) in a dry room is the noise, not its gaps.
    @Test func aNoiseThatComesAndGoesIsNotARoomsTail() {
        let rate = 16_000.0
        var signal = whiteNoise(96_000, dbfs: -80, seed: 5)
        let noise = whiteNoise(96_000, dbfs: -40, seed: 6)
        let gaps = [0.9, 2.3, 3.6, 5.1].map { Int($0 * rate)..<Int(($0 + 0.12) * rate) }
        for n in signal.indices where !gaps.contains(where: { $0.contains(n) }) { signal[n] += noise[n] }
        for n in signal.indices where sin(2 * .pi * 0.7 * Double(n) / rate) > -0.6 {
            signal[n] += Float(0.2 * sin(2 * .pi * 190 * Double(n) / rate))
        }
        let frames = PowerSpectrogram(signal, sampleRate: rate, frameSeconds: 0.032, hopSeconds: 0.01)
        let dry = 10 * log10(SpeechActivity(frames, rt60Seconds: 0.2).noisePower)
        let unmeasured = 10 * log10(SpeechActivity(frames).noisePower)
        let ringing = 10 * log10(SpeechActivity(frames, rt60Seconds: 1.0).noisePower)
        #expect(abs(dry + 40) < 3, "a dry room: the noise, \(dry) dBFS")
        #expect(unmeasured == dry, "an RT60 that could not be measured is no ringing room")
        #expect(ringing < -70, "a ringing room: the quiet in the gaps, \(ringing) dBFS")
    }

    /// A burst inside a pause, which the network is less sure of, is bridged over when it is
    /// short and possible; a word between pauses (not possible), a long stretch, and a stretch
    /// at either end are not.
    @Test func burstsInsideAPauseAreBridged() {
        func marks(_ s: String) -> [Bool] { s.map { $0 == "x" } }
        let bridged = PauseDetector.bridged(marks("xx..xx....xxx...."), by: marks("..xx..x.x.....xx."), within: 3)
        #expect(bridged == marks("xxxxxx....xxx...."))
        #expect(PauseDetector.bridged(marks("x...x"), by: marks(".xxx."), within: 3) == marks("xxxxx"))
        #expect(PauseDetector.bridged(marks("x....x"), by: marks(".xxxx."), within: 3) == marks("x....x"))
        // Pauses bridge both kinds over `bridgedSeconds` (30 frames); without possible frames, nothing.
        let gap = String(repeating: ".", count: 30), wide = String(repeating: ".", count: 31)
        let pauses = PauseDetector.Pauses(sure: marks("x" + gap + "x" + wide + "x"), likely: marks("x" + wide + "x"),
                                          possible: marks("." + String(repeating: "x", count: 62) + "."))
        #expect(pauses.bridged().sure == marks(String(repeating: "x", count: 32) + wide + "x"))
        #expect(pauses.bridged().likely == pauses.likely, "31 frames is longer than 0.3 s")
        #expect(PauseDetector.Pauses(sure: pauses.sure, likely: pauses.likely).bridged().sure == pauses.sure)
    }

    /// A frame the share network is sure of counts on its own only where it may decide alone
    /// and the talker is not too loud (a limiter's squeezed syllables sound like noise to it);
    /// no burst counts in a frame that is not heard, nor a pause outside `pausesHeard`.
    @Test func burstsCountOnlyWhereTheyAreHeard() {
        let rate = 16_000.0
        var signal = whiteNoise(48_000, dbfs: -70, seed: 7)
        let burst = whiteNoise(48_000, dbfs: -25, seed: 8)
        for n in 16_000..<32_000 { signal[n] += burst[n] }  // a noisy second between two quiet ones
        func marks(_ range: Range<Int>, _ count: Int = 300) -> [Bool] { (0..<count).map { range.contains($0) } }
        // The pause network hears pauses at both ends, the share network the middle as noise, and
        // is sure of it, where the pause network thinks it no pause.
        let pauses = PauseDetector.Pauses(sure: marks(0..<95).enumerated().map { $1 || $0 >= 205 }, likely: marks(0..<0),
                                          possible: marks(0..<0), noiseShare: (0..<300).map { (100..<200).contains($0) ? 0.9 : 0.1 })
        func noiseDB(_ x: [Float], pausesHeard: [Bool] = [], burstsHeard: [Bool] = [], alone: Bool) -> Double {
            let frames = PowerSpectrogram(x, sampleRate: rate, frameSeconds: 0.032, hopSeconds: 0.01)
            return 10 * log10(SpeechActivity(frames, pauses: pauses, pausesHeard: pausesHeard, burstsHeard: burstsHeard, shareAlone: alone).noisePower)
        }
        let quiet = noiseDB(signal, alone: false)
        #expect(quiet < -60, "the pauses alone: \(quiet) dBFS")
        let sure = noiseDB(signal, alone: true)
        #expect(sure > -35, "the sure burst counts: \(sure) dBFS")
        #expect(noiseDB(signal, burstsHeard: marks(0..<100) + marks(0..<0, 200), alone: true) < -60, "not where it is not heard")
        // The same second 12 dB up is as loud as a too-loud talker: a squeezed syllable, to it.
        let loud = signal.map { $0 * 4 }
        #expect(noiseDB(loud, alone: true) - noiseDB(loud, alone: false) < 0.01)
        // Pauses read only where heard: without the first second's, the last one's alone.
        let late = noiseDB(signal, pausesHeard: marks(100..<300), alone: false)  // frames 205 on
        #expect(abs(late - quiet) < 1 && late < -60)
    }

    /// The share network decides alone only where its ±250 ms of context holds no gap: a run of
    /// held samples at least a dropout's shortest (3 ms) long.
    @Test func theShareNetworkIsNotAloneBesideAGap() {
        var x = whiteNoise(32_000, dbfs: -30, seed: 5)
        for i in 16_000..<16_160 { x[i] = 0 }  // 10 ms at 1 s
        for i in 24_000..<24_016 { x[i] = 0 }  // 1 ms at 1.5 s: too short to be a gap
        let frames = PowerSpectrogram(x, sampleRate: 16_000, frameSeconds: 0.032, hopSeconds: 0.01)
        let away = SoundCheck.awayFromGaps(DropoutMeasure.held(x), sampleRate: 16_000, frames: frames)
        #expect(away.count == frames.frames.count)
        let beside = away.indices.filter { !away[$0] }
        #expect(beside.first == 75 && beside.last == 126, "\(beside.first ?? -1)…\(beside.last ?? -1)")
        #expect(beside.count == 52)
        #expect(SoundCheck.awayFromGaps(DropoutMeasure.held(whiteNoise(32_000, dbfs: -30, seed: 5)), sampleRate: 16_000, frames: frames).allSatisfy { $0 })
        // The pauses keep clear of the gap's own frames and 50 ms around them.
        let clear = SoundCheck.awayFromGaps(DropoutMeasure.held(x), sampleRate: 16_000, frames: frames, by: SoundCheck.gapClearanceSeconds)
        let near = clear.indices.filter { !clear[$0] }
        #expect(near.first == 95 && near.last == 106, "\(near.first ?? -1)…\(near.last ?? -1)")
    }
}
