import EarshotCore
import EarshotIO
import EarshotTestSupport
import Foundation
import Testing

@Suite struct CaptureCommand {
    /// Three seconds of a hot tone complex in noise at 16 kHz.
    func take(_ path: String) throws -> [Float] {
        let rate = 16_000.0
        let hiss = noise(count: Int(3 * rate), seed: 9, amplitude: 0.01)
        let audio = hiss.indices.map { n -> Float in
            let t = Double(n) / rate
            let syllable = Float(max(0, sin(2 * Double.pi * 3 * t)))
            return syllable * Float(0.6 * sin(2 * Double.pi * 200 * t) + 0.3 * sin(2 * Double.pi * 600 * t)) + hiss[n]
        }
        try AudioFile.write(AudioBuffer(channels: [audio]), to: path, sampleRate: rate, sampleFormat: .f32)
        return audio
    }

    @Test func everyModeKeepsTheLengthAndTheCeiling() throws {
        try withTemporaryDirectory { dir in
            let input = try take(dir.appendingPathComponent("in.wav").path)
            // wide-spectrum: the former spelling, still read.
            for mode in ["raw", "standard", "voice_isolation", "wide-spectrum"] {
                let result = try earshot("capture", "in.wav", "-o", "\(mode).wav", "--mode", mode, in: dir)
                #expect(result.status == 0, "\(mode): \(result.stderr)")
                let (info, buffer) = try AudioFile.read(path: dir.appendingPathComponent("\(mode).wav").path)
                #expect(info.frameCount == input.count && info.sampleRate == 16_000, "\(mode)")
                let out = Array(buffer.channel(0))
                if mode == "raw" {
                    #expect(zip(out, input).allSatisfy { abs($0 - $1) < 1e-6 }, "raw changes nothing")
                } else {
                    #expect(out.allSatisfy { abs($0) <= 0.8913 }, "\(mode): peaks at most -1 dBFS")
                }
            }
        }
    }

    @Test func badInputGetsOneLineAndNoOutput() throws {
        try withTemporaryDirectory { dir in
            _ = try take(dir.appendingPathComponent("in.wav").path)
            for arguments in [["capture", "in.wav", "-o", "out.wav", "--mode", "loud"],
                              ["capture", "in.wav", "-o", "out.wav", "--far", "in.wav"],
                              ["capture", "in.wav", "-o", "out.wav", "--seconds", "3"],
                              ["capture", "missing.wav", "-o", "out.wav"]] {
                let result = try runProgram(earshotPath, arguments, directory: dir)
                #expect(result.status == 2, "\(arguments): \(result.stderr)")
                #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("out.wav").path))
            }
        }
    }
}
