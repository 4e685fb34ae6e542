import EarshotCore
import EarshotDSP
import Foundation

/// Which 10 ms frames of a recording hold no speech of the talker: the moments between words
/// where only the noise is heard, however loud the noise is there.
///
/// A room tone read as a low percentile of the recording finds steady noise, but a bark, a shot,
/// a passing car or another voice between the words lies far above that percentile, and the
/// noise's mean with it. Reading the noise as the mean over the talker's pauses counts the
/// bursts too, so the SNR is the one a listener hears. A frame's level alone cannot tell a pause
/// from a word over loud noise; this small network judges it from the frame's spectrum against
/// each band's floor, its level against the talker's active level, its timbre and pitch against
/// the talker's, and the ±50–250 ms around it.
///
/// Trained by `training/train_pauses.py` on LibriSpeech training speakers in the tuning set's
/// noise kinds, other voices and tonal alerts; judged on the held-out kinds of `make eval-soundcheck`.
/// Trained with UrbanSound8K (CC BY-NC 3.0): see the metadata `licence`.
struct PauseDetector: Sendable {
    /// The rate it hears at: a recording at another rate is resampled first.
    static let sampleRate = 16_000.0
    static let frameSeconds = 0.032, hopSeconds = 0.01
    static let bandCount = 20
    static let featureCount = 2 * bandCount + 5 + bandCount + 5

    /// (first bin, bin after the last) of each band of the 512-point frame.
    let bandEdges: [(Int, Int)]
    /// A small network: each layer's weights (outputs × inputs, row-major) and biases; ReLU
    /// between, one logit out.
    typealias Network = [(weights: [Float], bias: [Float])]
    /// Whether a frame is a pause.
    let layers: Network
    /// How much of a frame's power is the noise's (tensors `share.layer…`): trained on soft
    /// targets, so it reads the share to expect, and hears a burst on a word that no pause
    /// holds (`SpeechActivity.withBurstsUnderWords`). Empty in a file without it.
    let shareLayers: Network
    /// The probability over which a frame counts as a pause (metadata `threshold`), as a logit:
    /// set high, so that words are rarely taken for noise in a clean recording.
    let leastLogit: Double

    static func bundled() throws -> PauseDetector { try loaded.get() }

    private static let loaded: Result<PauseDetector, Error> = Result {
        guard let url = Bundle.module.url(forResource: "PauseDetector", withExtension: "safetensors") else {
            throw EarshotError.internalFailure("the sound check's pause detector (PauseDetector.safetensors) is missing from this build")
        }
        return try PauseDetector(SafeTensors(contentsOf: url))
    }

    init(_ model: SafeTensors) throws {
        let edges = try model.tensor("band_edges", shape: [Self.bandCount, 2])
        bandEdges = (0..<Self.bandCount).map { (Int(edges[2 * $0]), Int(edges[2 * $0 + 1])) }
        layers = try Self.network(model, prefix: "")
        shareLayers = model.tensors["share.layer0.weight"] == nil ? [] : try Self.network(model, prefix: "share.")
        guard let threshold = Double(model.metadata["threshold"] ?? ""), threshold > 0, threshold < 1 else {
            throw ModelError.noThreshold(model: "the pause detector")
        }
        leastLogit = log(threshold / (1 - threshold))
    }

    /// The layers `prefix`layer0, 1, … of `model`, checked to chain from the features to one output.
    private static func network(_ model: SafeTensors, prefix: String) throws -> Network {
        var layers: Network = []
        var inputs = featureCount
        while let shape = model.tensors["\(prefix)layer\(layers.count).weight"]?.shape {
            guard shape.count == 2, shape[1] == inputs else {
                throw ModelError.layerInputs(model: "the pause detector", layer: layers.count, takes: shape.last ?? 0, expected: inputs)
            }
            layers.append((try model.tensor("\(prefix)layer\(layers.count).weight", shape: shape),
                           try model.tensor("\(prefix)layer\(layers.count).bias", shape: [shape[0]])))
            inputs = shape[0]
        }
        guard !layers.isEmpty, inputs == 1 else {
            throw ModelError.noSingleOutput(model: "the pause detector")
        }
        return layers
    }

    /// Which 10 ms frames are the talker's pauses: those over the model's threshold (`sure`), and
    /// those at least `likelyPause` likely, which stand in where too few are sure; and those at
    /// least `bridgedPause` likely, which may be a burst inside a pause (`bridged`).
    struct Pauses {
        var sure: [Bool]
        var likely: [Bool]
        var possible: [Bool] = []
        /// The noise's share of each frame's power, 0…1 (0 in digital silence); empty where
        /// the model has no share network.
        var noiseShare: [Double] = []

        /// The same pauses with the possible frames of each short stretch inside them.
        func bridged() -> Pauses {
            guard !possible.isEmpty else { return self }
            let span = Int((PauseDetector.bridgedSeconds / PauseDetector.hopSeconds).rounded())
            return Pauses(sure: PauseDetector.bridged(sure, by: possible, within: span),
                          likely: PauseDetector.bridged(likely, by: possible, within: span), possible: possible, noiseShare: noiseShare)
        }
    }

    /// Under noise that is itself speech-like (other voices, barks, shots) few frames pass the
    /// model's threshold; at even odds a frame still counts as a likely pause.
    static let likelyPause = 0.5

    /// A knock or a bark inside a pause makes the network less sure of the frames it fills, and
    /// the pause would be counted without the burst, the noise read too quiet. So a stretch of
    /// at most `bridgedSeconds` between two frames of a pause is the pause too, where its frames
    /// are at least `bridgedPause` likely: words between pauses mostly score under that. In a room
    /// that rings the same stretch is the pause's tail, and is not bridged (`SpeechActivity`).
    /// Set on the tuning material of `make eval-soundcheck`: of the pairs that keep the tuning
    /// set's macro-F1 and clean recordings, the one that reads its noise and its synthetic bangs
    /// best.
    static let bridgedPause = 0.3
    static let bridgedSeconds = 0.3

    /// The talker's pauses in `signal` (16 kHz); digital silence is never a pause (it says
    /// nothing of the noise).
    func pauses(in signal: [Float]) -> Pauses {
        let (features, audible) = self.features(signal)
        let logits = features.map { Self.logit(layers, $0) }
        func over(_ least: Double) -> [Bool] { logits.indices.map { audible[$0] && logits[$0] > least } }
        func atLeast(_ probability: Double) -> Double { min(leastLogit, log(probability / (1 - probability))) }
        let shares = shareLayers.isEmpty ? [] : features.indices.map { t in
            audible[t] ? max(Self.leastNoiseShare, 1 / (1 + exp(-Self.logit(shareLayers, features[t])))) : 0
        }
        return Pauses(sure: over(leastLogit), likely: over(atLeast(Self.likelyPause)), possible: over(atLeast(Self.bridgedPause)),
                      noiseShare: shares)
    }

    /// `marks` with, in each run of at most `span` unmarked frames between two marked ones, the
    /// frames `possible` marks.
    static func bridged(_ marks: [Bool], by possible: [Bool], within span: Int) -> [Bool] {
        var out = marks, t = 0
        while t < marks.count {
            guard !marks[t] else { t += 1; continue }
            let start = t
            while t < marks.count && !marks[t] { t += 1 }
            if start > 0, t < marks.count, t - start <= span {
                for u in start..<t where possible[u] { out[u] = true }
            }
        }
        return out
    }

    /// The probability that each frame is a pause, for checking against the reference.
    func pauseProbabilities(in signal: [Float]) -> [Double] {
        features(signal).features.map { 1 / (1 + exp(-Self.logit(layers, $0))) }
    }

    /// The share network's training targets stop at −40 dB: a frame is never taken for less noise.
    static let leastNoiseShare = 1e-4

    private static func logit(_ layers: Network, _ x: [Double]) -> Double {
        var values = x
        for (index, layer) in layers.enumerated() {
            let inputs = values.count
            values = layer.bias.indices.map { o in
                var sum = Double(layer.bias[o])
                for i in 0..<inputs { sum += Double(layer.weights[o * inputs + i]) * values[i] }
                return index == layers.count - 1 ? sum : max(0, sum)
            }
        }
        return values[0]
    }

    /// The 70 values per frame of `training/pause_features.py`, and which frames are audible.
    func features(_ signal: [Float]) -> (features: [[Double]], audible: [Bool]) {
        let spectrogram = PowerSpectrogram(signal, sampleRate: Self.sampleRate, frameSeconds: Self.frameSeconds, hopSeconds: Self.hopSeconds)
        let count = spectrogram.frames.count
        let bands = spectrogram.frames.map { frame in bandEdges.map { a, b in frame[a..<b].reduce(0, +) } }
        let totals = spectrogram.frames.map { $0.reduce(0, +) }
        let audible = totals.map { $0 > 1e-12 }
        let kept = audible.contains(true) ? audible : audible.map { _ in true }
        let tiny = 1e-14

        let smoothedBands = Self.movingMean(bands, half: 2)
        let floors = (0..<Self.bandCount).map { j in
            Self.quantile(smoothedBands.indices.filter { kept[$0] }.map { smoothedBands[$0][j] }, 0.1) + tiny
        }
        let smoothedTotals = Self.movingMean(totals.map { [$0] }, half: 2).map { $0[0] }
        let broadband = Self.quantile(smoothedTotals.indices.filter { kept[$0] }.map { smoothedTotals[$0] }, 0.1) + tiny
        let level = SpeechActivity.activeLevel(totals.map { max(0, $0 - broadband) }) + tiny

        let over = bands.map { row in (0..<Self.bandCount).map { j in min(60, max(-10, 10 * log10((row[j] + tiny) / floors[j]))) / 10 } }
        let relative = totals.map { min(20, max(-60, 10 * log10(($0 + tiny) / level))) / 10 }
        let overAround = Self.movingMean(over, half: 5)
        let relativeColumn = relative.map { [$0] }
        let near = Self.movingMean(relativeColumn, half: 5), wide = Self.movingMean(relativeColumn, half: 25)
        let headroom = min(80, max(0, 10 * log10(level / broadband))) / 10
        let talker = Self.talkerRelative(spectrogram, bands: bands, totals: totals, level: level)
        let features = (0..<count).map { t in
            var loudest = -Double.infinity
            for d in -25...25 { loudest = max(loudest, relative[min(count - 1, max(0, t + d))]) }
            return over[t] + overAround[t] + [relative[t], near[t][0], wide[t][0], loudest, headroom] + talker[t]
        }
        return (features, audible)
    }

    /// Values 45–69: each band's share of the frame against the talker's (the mean over the
    /// frames within 10 dB of the active level) over ±50 ms, their distance, the frame's
    /// periodicity and how far its pitch lies from the talker's. Another voice, a bark or a motor
    /// between the words differs from the talker there, where its level alone may not.
    static func talkerRelative(_ spectrogram: PowerSpectrogram, bands: [[Double]], totals: [Double], level: Double) -> [[Double]] {
        let tiny = 1e-14, count = totals.count
        var loud = totals.map { $0 > level * 0.1 }
        if loud.filter({ $0 }).count < 10 {
            let line = quantile(totals, 0.8)
            loud = totals.map { $0 >= line }
        }
        let shape = bands.indices.map { t in bands[t].map { 10 * log10(($0 + tiny) / (totals[t] + tiny)) } }
        let loudFrames = shape.indices.filter { loud[$0] }
        let usual = (0..<bandCount).map { j in loudFrames.reduce(0.0) { $0 + shape[$1][j] } / Double(loudFrames.count) }
        let timbre = movingMean(shape.map { row in (0..<bandCount).map { j in min(30, max(-30, row[j] - usual[j])) / 10 } }, half: 5)

        // Periodicity from the autocorrelation, the inverse transform of the frame's power.
        let fft = RealFFT(size: spectrogram.frameSize, planning: .estimate)
        let shortest = Int(sampleRate) / 400, longest = Int(sampleRate) * 2 / 125
        var periodicity = [Double](repeating: 0, count: count), octaves = [Double](repeating: 0, count: count)
        for t in 0..<count {
            for k in 0..<fft.binCount {
                fft.spectrum[2 * k] = Float(spectrogram.frames[t][k])
                fft.spectrum[2 * k + 1] = 0
            }
            fft.inverse()
            var best = shortest
            for lag in shortest..<longest where fft.time[lag] > fft.time[best] { best = lag }
            periodicity[t] = Double(fft.time[best]) / (Double(fft.time[0]) + tiny)
            octaves[t] = log2(sampleRate / Double(best))
        }
        let voiced = (0..<count).filter { periodicity[$0] > 0.4 && loud[$0] }
        let pitch = quantile(voiced.count > 5 ? voiced.map { octaves[$0] } : octaves, 0.5)
        let off = (0..<count).map { t in min(2, abs(octaves[t] - pitch)) * min(1, max(0, periodicity[t])) }
        let steady = movingMean(periodicity.map { [$0] }, half: 5), steadyOff = movingMean(off.map { [$0] }, half: 5)
        return (0..<count).map { t in
            let distance = (timbre[t].reduce(0) { $0 + $1 * $1 } / Double(bandCount)).squareRoot()
            return timbre[t] + [distance, periodicity[t], steady[t][0], off[t], steadyOff[t][0]]
        }
    }

    /// Each row averaged with its `half` neighbours either side, the ends repeated.
    static func movingMean(_ rows: [[Double]], half: Int) -> [[Double]] {
        guard let width = rows.first?.count else { return [] }
        return rows.indices.map { t in
            var sum = [Double](repeating: 0, count: width)
            for d in -half...half {
                let row = rows[min(rows.count - 1, max(0, t + d))]
                for k in 0..<width { sum[k] += row[k] }
            }
            return sum.map { $0 / Double(2 * half + 1) }
        }
    }

    /// numpy's default (linear) quantile.
    static func quantile(_ values: [Double], _ q: Double) -> Double {
        guard !values.isEmpty else { return 0 }
        let sorted = values.sorted(), position = Double(sorted.count - 1) * q
        let low = Int(position), high = min(sorted.count - 1, low + 1)
        return sorted[low] + (position - Double(low)) * (sorted[high] - sorted[low])
    }
}
