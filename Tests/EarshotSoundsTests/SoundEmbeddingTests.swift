import EarshotCore
@testable import EarshotSounds
import EarshotTestSupport
import Foundation
import Testing

private struct EmbeddingParity: Decodable {
    var sampleCount: Int
    var windowEnds: [Int]
    var embeddings: [[Float]]
}

@Suite struct SoundEmbeddingTests {
    /// The shipped network, streamed, gives the embeddings the training script computed from
    /// the same signal (its features in float64 there, float32 here).
    @Test func matchesTheTrainingScript() throws {
        let url = try #require(Bundle.module.url(forResource: "embedding_parity", withExtension: "json", subdirectory: "Fixtures"))
        let expected = try JSONDecoder().decode(EmbeddingParity.self, from: Data(contentsOf: url))
        let embedding = try SoundEmbedding.bundled()
        let heard = embedding.embeddings(of: paritySignal(count: expected.sampleCount))
        #expect(heard.count == expected.embeddings.count * embedding.size)
        for (i, row) in expected.embeddings.enumerated() where (i + 1) * embedding.size <= heard.count {
            let swift = heard[(i * embedding.size)..<((i + 1) * embedding.size)]
            let cosine = zip(swift, row).reduce(Float(0)) { $0 + $1.0 * $1.1 }
            #expect(cosine > 0.999, "window ending at frame \(expected.windowEnds[i]): cosine \(cosine)")
        }
    }

    /// Every embedding, the bank's too, lies on the unit sphere.
    @Test func embeddingsHaveUnitLength() throws {
        let embedding = try SoundEmbedding.bundled()
        #expect(embedding.bankCount >= 1000 && embedding.bankHours >= 1, "\(embedding.bankCount) points from \(embedding.bankHours) h")
        let heard = embedding.embeddings(of: noise(count: 24_000, seed: 3, amplitude: 0.1))
        for rows in [heard, Array(embedding.bank.prefix(100 * embedding.size))] {
            for i in 0..<(rows.count / embedding.size) {
                let norm = rows[(i * embedding.size)..<((i + 1) * embedding.size)].reduce(Float(0)) { $0 + $1 * $1 }
                #expect(abs(norm - 1) < 1e-3, "squared norm \(norm)")
            }
        }
    }

    /// A sound's threshold lies above the best its prints reach on the bank, and above what the
    /// user rejected; never below the base or above the highest.
    @Test func thresholdsStandAboveTheBankAndTheRejected() throws {
        let embedding = try SoundEmbedding.bundled()
        let chime = (0..<24_000).map { n -> Float in
            let t = Double(n) / 16_000
            return Float(0.3 * exp(-3 * t) * (sin(2 * .pi * 660 * t) + (t > 0.5 ? sin(2 * .pi * 550 * t) : 0)))
        }
        let clip = [Float](repeating: 0, count: 4000) + chime + [Float](repeating: 0, count: 4000)
        let plain = try SoundDetector.Sound(name: "bell", enrollments: [clip], negatives: [], embedding: embedding)
        #expect(plain.threshold >= SoundDetector.Sound.baseThreshold && plain.threshold <= SoundDetector.Sound.highestThreshold)
        let bankBest = SoundDetector.Sound.best(plain.prints, against: embedding.bank, size: embedding.size)
        #expect(plain.threshold >= min(SoundDetector.Sound.highestThreshold, bankBest + SoundDetector.Sound.bankMargin) - 1e-9)
        // The chime itself, rejected: the threshold rises above what it scores, up to the highest.
        let rejected = try SoundDetector.Sound(name: "bell", enrollments: [clip], negatives: [clip], embedding: embedding)
        #expect(rejected.threshold >= min(SoundDetector.Sound.highestThreshold, plain.threshold))
        // The chime heard again in a quiet room scores above its threshold.
        let room = noise(count: 48_000, seed: 4, amplitude: 0.003)
        let heard = (0..<48_000).map { n in room[n] + (n >= 12_000 && n - 12_000 < chime.count ? chime[n - 12_000] : 0) }
        let (_, scores) = SoundDetector.scores(of: heard, sounds: [plain], embedding: embedding)
        #expect((scores[0].max() ?? 0) >= plain.threshold, "the chime scores \(scores[0].max() ?? 0), its threshold is \(plain.threshold)")
    }

    /// The same output whatever the block size: the stream does not depend on how audio arrives.
    @Test func blockSizeDoesNotMatter() throws {
        let embedding = try SoundEmbedding.bundled()
        let signal = paritySignal(count: 40_000)
        let whole = embedding.embeddings(of: signal)
        let stream = EmbeddingStream(embedding)
        var pieces: [Float] = []
        var start = 0, size = 1
        while start < signal.count {
            let end = min(signal.count, start + size)
            signal[start..<end].withUnsafeBufferPointer { stream.push($0) { _, e in pieces += e } }
            start = end
            size = size * 3 % 1_777 + 1
        }
        #expect(pieces == whole)
    }
}
