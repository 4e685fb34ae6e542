import EarshotCore
import EarshotDSP
import EarshotTestSupport
import Foundation
import Testing

@Suite struct ConvolutionTests {
    @Test(arguments: [(1, 1), (5, 3), (40, 33), (1000, 1000), (5000, 300), (300, 5000), (20_000, 64), (12_345, 2_222)])
    func matchesDirectConvolution(lengths: (Int, Int)) {
        let x = noise(count: lengths.0, seed: 1), h = noise(count: lengths.1, seed: 2)
        let y = Convolution.convolve(x, h)
        #expect(y.count == lengths.0 + lengths.1 - 1)
        #expect(relativeError(y, directConvolution(x, h)) < 1e-5)
    }

    @Test func fastSizesHaveOnlySmallPrimeFactors() {
        for n in [1, 2, 97, 1000, 65_536, 65_537, 1_000_003, 5_953_000] {
            let size = RealFFT.fastSize(atLeast: n)
            #expect(size >= n && size < 2 * max(n, 1))
            var rest = size, twos = 0
            while rest % 2 == 0 { rest /= 2; twos += 1 }
            for p in n > 65_536 ? [3, 5] : [3, 5, 7] { while rest % p == 0 { rest /= p } }
            #expect(rest == 1, "\(size)")
            if n > 65_536 { #expect(twos >= 5, "\(size)") }
        }
        #expect(RealFFT.fastSize(atLeast: 1000) == 1000)
        #expect(RealFFT.fastSize(atLeast: 1001) == 1008)
        #expect(RealFFT.fastSize(atLeast: 5_953_500) <= 6_000_000)
    }

    @Test func channelPairing() throws {
        let mono = [noise(count: 100, seed: 3)]
        let stereo = [noise(count: 50, seed: 4), noise(count: 50, seed: 5)]
        let out = try Convolution.convolve(channels: mono, with: stereo)
        #expect(out.count == 2 && out[1] == Convolution.convolve(mono[0], stereo[1]))
        #expect(try Convolution.convolve(channels: stereo, with: mono).count == 2)
        #expect(throws: DSPError.self) { try Convolution.convolve(channels: [[1], [1], [1]], with: stereo) }
    }
}

@Suite struct PartitionedConvolverTests {
    @Test(arguments: [32, 64, 256, 1024])
    func streamsTheExactConvolution(partition: Int) throws {
        let response = noise(count: 3 * partition + 17, seed: 7).enumerated().map { $1 * exp(-Float($0) / Float(partition)) }
        let input = noise(count: 9000, seed: 8)
        let reference = directConvolution(input, response)
        for blocks in [[1], [7], [partition], [480, 3, 1000]] {
            var convolver = try PartitionedConvolver(response: [response], partitionSize: partition)
            let output = try run(&convolver, over: input + [Float](repeating: 0, count: partition), blockSizes: blocks)
            let delay = convolver.latencySamples
            #expect(delay == partition - 1)
            let aligned = Array(output[delay..<(delay + input.count)])
            #expect(relativeError(aligned, Array(reference[0..<input.count])) < 1e-5, "blocks \(blocks)")
        }
    }

    @Test func stereoResponsePerChannelAndMonoShared() throws {
        let left = noise(count: 100, seed: 9), right = noise(count: 100, seed: 10)
        let input = [noise(count: 2000, seed: 11), noise(count: 2000, seed: 12)]
        let convolver = try PartitionedConvolver(response: [left, right], partitionSize: 64)
        try convolver.prepare(ProcessSpec(sampleRate: 48_000, maximumBlockFrames: 2000, channelCount: 2))
        let buffer = AudioBuffer(channels: input)
        var block = buffer.block()
        convolver.process(&block)
        for (c, h) in [left, right].enumerated() {
            let expected = directConvolution(input[c], h)
            let got = Array(buffer.channel(c)[63..<2000])
            #expect(relativeError(got, Array(expected[0..<(2000 - 63)])) < 1e-5)
        }
        let mismatched = try PartitionedConvolver(response: [left, right], partitionSize: 64)
        #expect(throws: DSPError.self) {
            try mismatched.prepare(ProcessSpec(sampleRate: 48_000, maximumBlockFrames: 64, channelCount: 3))
        }
        #expect(throws: DSPError.self) { try PartitionedConvolver(response: [[]], partitionSize: 64) }
    }
}

@Suite struct LoudnessTests {
    @Test func sineLevelsFollowBS1770() {
        // A full-scale 1 kHz sine reads −3.01 LUFS on one channel; two channels add 3 dB.
        let tone = sine(frequencyHz: 1000, sampleRate: 48_000, count: 48_000 * 3)
        #expect(abs(Loudness.integrated([tone], sampleRate: 48_000)! + 3.01) < 0.05)
        #expect(abs(Loudness.integrated([tone, tone], sampleRate: 48_000)! - 0.0) < 0.05)
        let quiet = tone.map { $0 * Float(Decibels.toAmplitude(-20)) }
        #expect(abs(Loudness.integrated([quiet], sampleRate: 48_000)! + 23.01) < 0.05)
    }

    @Test func kWeightingMatchesThePublished48kHzCoefficients() {
        let filter = Loudness.kWeighting(sampleRate: 48_000)
        let shelf = filter.sections[0], highPass = filter.sections[1]
        #expect(abs(shelf.b0 - 1.53512485958697) < 1e-6 && abs(shelf.b1 + 2.69169618940638) < 1e-6)
        #expect(abs(shelf.b2 - 1.19839281085285) < 1e-6 && abs(shelf.a1 + 1.69065929318241) < 1e-6)
        #expect(abs(shelf.a2 - 0.73248077421585) < 1e-6)
        #expect(abs(highPass.a1 + 1.99004745483398) < 1e-6 && abs(highPass.a2 - 0.99007225036621) < 1e-6)
    }

    @Test func gatesSilenceAndShortInput() {
        #expect(Loudness.integrated([[Float](repeating: 0, count: 48_000)], sampleRate: 48_000) == nil)
        #expect(Loudness.integrated([[Float](repeating: 0.5, count: 100)], sampleRate: 48_000) == nil)
    }
}
