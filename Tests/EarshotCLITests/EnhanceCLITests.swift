import EarshotCore
import EarshotIO
import EarshotTestSupport
import Foundation
import Testing

@Suite struct EnhanceCommands {
    /// Half a second of noise, then noise and a tone complex, at the given rate and channels.
    func noisyFile(_ path: String, rate: Double, channels: Int) throws -> [[Float]] {
        var random = SeededRandom(seed: 7)
        let count = Int(2 * rate)
        let audio = (0..<channels).map { _ in
            (0..<count).map { n -> Float in
                let t = Double(n) / rate
                let tone = t > 1 ? 0.1 * sin(2 * Double.pi * 440 * t) + 0.05 * sin(2 * Double.pi * 880 * t) : 0
                return Float(tone + 0.02 * random.nextGaussian())
            }
        }
        try AudioFile.write(AudioBuffer(channels: audio), to: path, sampleRate: rate, sampleFormat: .f32)
        return audio
    }

    func levelDB(_ x: ArraySlice<Float>) -> Double {
        10 * log10(x.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(x.count))
    }

    @Test func enhanceKeepsTheFormatAndRemovesNoise() throws {
        try withTemporaryDirectory { dir in
            let input = try noisyFile(dir.appendingPathComponent("in.wav").path, rate: 44_100, channels: 2)
            let result = try earshot("enhance", "in.wav", "-o", "out.wav", "--verbose", in: dir)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stderr.contains("7.96 ms algorithmic delay"), "\(result.stderr)")
            let (info, buffer) = try AudioFile.read(path: dir.appendingPathComponent("out.wav").path)
            #expect(info.sampleRate == 44_100 && info.channelCount == 2 && abs(info.frameCount - 88_200) <= 2)
            let quiet = 26_000..<43_000  // noise alone, after the noise training
            for c in 0..<2 {
                #expect(levelDB(input[c][quiet]) - levelDB(Array(buffer.channel(c))[quiet]) > 12, "channel \(c)")
            }
        }
    }

    @Test func enhanceStreamsRawPCM() throws {
        var random = SeededRandom(seed: 8)
        let samples = (0..<16_000).map { _ in Int16(clamping: Int(random.nextGaussian() * 2000)) }
        let input = samples.withUnsafeBytes { Data($0) }
        let result = try earshot("enhance", "-", "-o", "-", "--raw-rate", "16000", input: input)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdoutData.count == input.count, "as many samples out as in")
    }

    @Test func listenRunsTheChainOnAFile() throws {
        try withTemporaryDirectory { dir in
            _ = try noisyFile(dir.appendingPathComponent("in.wav").path, rate: 16_000, channels: 1)
            let result = try earshot("listen", "in.wav", "-o", "out.wav", "--enhance", "--max-output-dbfs", "-20", in: dir)
            #expect(result.status == 0, "\(result.stderr)")
            let (info, buffer) = try AudioFile.read(path: dir.appendingPathComponent("out.wav").path)
            #expect(info.sampleRate == 16_000 && info.frameCount == 32_000)
            #expect(buffer.channel(0).allSatisfy { abs($0) <= 0.1001 }, "never above −20 dBFS")
        }
    }

    @Test func listenWritesRawPCMToStdout() throws {
        try withTemporaryDirectory { dir in
            _ = try noisyFile(dir.appendingPathComponent("in.wav").path, rate: 16_000, channels: 1)
            let result = try earshot("listen", "in.wav", "-o", "-", "--enhance", in: dir)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdoutData.count == 32_000 * 2, "two seconds of 16-bit mono")
        }
    }

    @Test(arguments: [
        (["enhance", "in.wav", "-o", "out.wav", "--strength", "99"], "strength"),
        (["enhance", "-", "-o", "out.wav", "--raw-rate", "0"], "sample rate 0 Hz"),
        (["enhance", "missing.wav", "-o", "out.wav"], "no such file"),
        (["listen", "in.wav", "-o", "out.wav", "--max-output-dbfs", "3"], "max-output-dbfs"),
    ])
    func badInputFailsCleanly(arguments: [String], message: String) throws {
        try withTemporaryDirectory { dir in
            _ = try noisyFile(dir.appendingPathComponent("in.wav").path, rate: 16_000, channels: 1)
            let result = try runProgram(earshotPath, arguments, input: Data(), directory: dir)
            #expect(result.status == 2 && result.stderr.contains(message), "\(result.status): \(result.stderr)")
            #expect(try contents(of: dir) == ["in.wav"])
        }
    }
}
