import EarshotCore
import EarshotDSP
import EarshotRoom
import EarshotTestSupport
import Foundation
import Testing

/// A small decaying "room": noise under an exponential envelope.
func toyResponse(count: Int, seed: UInt64) -> [Float] {
    var h = noise(count: count, seed: seed).enumerated().map { $1 * exp(-Float($0) / Float(count / 5)) }
    h[0] = 1
    return h
}

@Suite struct IteratedConvolutionTests {
    @Test func everyGenerationIsExact() throws {
        let x = noise(count: 700, seed: 1), h = toyResponse(count: 90, seed: 2)
        let iteration = try IteratedConvolution(source: [x], response: [h])
        var reference = x.map(Double.init)
        var seen: [Int] = []
        try iteration.run(through: 8, wanted: Set(1...8)) { k, channels in
            reference = directConvolution(reference, h.map(Double.init))
            #expect(channels[0].count == reference.count && channels[0].count == iteration.length(ofGeneration: k))
            #expect(relativeError(channels[0], reference) <= 1e-4, "generation \(k)")
            seen.append(k)
        }
        #expect(seen == Array(1...8))
    }

    @Test func onlyWantedGenerationsAreDelivered() throws {
        let iteration = try IteratedConvolution(source: [noise(count: 100, seed: 3)], response: [toyResponse(count: 20, seed: 4)])
        var seen: [Int] = []
        var progress: [Int] = []
        try iteration.run(through: 32, wanted: [32], progress: { progress.append($0) }) { k, _ in seen.append(k) }
        #expect(seen == [32] && progress == [32])
    }

    @Test func resonantRoomsDoNotOverflow() throws {
        // A response whose spectrum peaks far above 1: |H|³² is ~10⁴⁰, past Float's range.
        let h = (0..<64).map { _ in Float(1) }  // |H(0)| = 64
        let x = noise(count: 256, seed: 5)
        let iteration = try IteratedConvolution(source: [x], response: [h])
        var reference = x.map(Double.init)
        try iteration.run(through: 6, wanted: [6]) { _, channels in
            for _ in 0..<6 { reference = directConvolution(reference, h.map(Double.init)) }
            #expect(relativeError(channels[0], reference) <= 1e-4)
        }
        #expect(throws: RoomError.self) { try iteration.run(through: 32, wanted: [32]) { _, _ in } }
    }

    @Test func stereoAndMonoCombinations() throws {
        let mono = noise(count: 300, seed: 6)
        let left = toyResponse(count: 40, seed: 7), right = toyResponse(count: 40, seed: 8)
        let iteration = try IteratedConvolution(source: [mono], response: [left, right])
        #expect(iteration.channelCount == 2)
        try iteration.run(through: 3, wanted: [3]) { _, channels in
            for (c, h) in [left, right].enumerated() {
                var reference = mono.map(Double.init)
                for _ in 0..<3 { reference = directConvolution(reference, h.map(Double.init)) }
                #expect(relativeError(channels[c], reference) <= 1e-4)
            }
        }
        #expect(throws: DSPError.self) { try IteratedConvolution(source: [mono, mono, mono], response: [left, right]) }
        #expect(throws: RoomError.silentResponse) { try IteratedConvolution(source: [mono], response: [[0, 0, 0]]) }
        #expect(throws: RoomError.silentSource) { try IteratedConvolution(source: [[]], response: [left]) }
        let huge = try IteratedConvolution(source: [mono], response: [[Float](repeating: 0.001, count: 1 << 20)])
        #expect(throws: RoomError.self) { try huge.run(through: 200, wanted: [200]) { _, _ in } }
    }

    @Test func normalizationKeepsBalanceAndCeilings() {
        var stereo: [[Float]] = [noise(count: 48_000, seed: 9, amplitude: 0.1), noise(count: 48_000, seed: 10, amplitude: 0.05)]
        let ratio = stereo[0].map { abs($0) }.max()! / stereo[1].map { abs($0) }.max()!
        GenerationNormalization.peak.apply(to: &stereo, sampleRate: 48_000)
        let peak = max(stereo[0].map { abs($0) }.max()!, stereo[1].map { abs($0) }.max()!)
        #expect(abs(Decibels.fromAmplitude(Double(peak)) + 1) < 1e-4)
        #expect(abs(stereo[0].map { abs($0) }.max()! / stereo[1].map { abs($0) }.max()! - ratio) < 1e-4, "one gain for both channels")

        var quiet: [[Float]] = [(0..<96_000).map { Float(0.01 * sin(Double($0) * 0.1)) }]
        GenerationNormalization.loudness.apply(to: &quiet, sampleRate: 48_000)
        #expect(abs(Loudness.integrated(quiet, sampleRate: 48_000)! + 23) < 0.05)

        var loudSpiky: [[Float]] = [[Float](repeating: 0, count: 96_000)]
        loudSpiky[0][100] = 0.01
        GenerationNormalization.loudness.apply(to: &loudSpiky, sampleRate: 48_000)
        #expect(loudSpiky[0].map { abs($0) }.max()! <= Float(Decibels.toAmplitude(-1)) + 1e-6, "never past −1 dBFS")

        var untouched: [[Float]] = [[0.5, -2]]
        GenerationNormalization.none.apply(to: &untouched, sampleRate: 48_000)
        #expect(untouched == [[0.5, -2]])
    }

    @Test func trimmingCutsTheSilentTail() {
        var channels: [[Float]] = [[1, 0.5, 0.1] + [Float](repeating: 1e-6, count: 10_000)]
        trimTail(&channels, sampleRate: 16_000)
        #expect(channels[0].count == 3 + 160)
        #expect(channels[0][0] == 1)
    }
}
