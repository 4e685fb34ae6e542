import EarshotCore
import EarshotIO
import EarshotTestSupport
import Foundation
import Testing

@Suite struct EchoCancelCommand {
    @Test func cancelsAndKeepsTheMicrophonesLength() throws {
        try withTemporaryDirectory { dir in
            let rate = 16_000.0
            // The far end is an 8 kHz file; the loudspeaker plays it 200 ms late and 6 dB down
            // into a microphone recording at 16 kHz.
            let far8k = noise(count: 6 * 8_000, seed: 5, amplitude: 0.2)
            let played = try Resampler.resample([far8k], from: 8_000, to: rate)[0]
            let delay = Int(0.2 * rate)
            let mic = played.indices.map { $0 >= delay ? 0.5 * played[$0 - delay] : 0 }
            try AudioFile.write(AudioBuffer(channels: [mic]), to: dir.appendingPathComponent("mic.wav").path, sampleRate: rate, sampleFormat: .f32)
            try AudioFile.write(AudioBuffer(channels: [far8k]), to: dir.appendingPathComponent("far.wav").path, sampleRate: 8_000, sampleFormat: .f32)
            let result = try earshot("aec", "--mic", "mic.wav", "--far", "far.wav", "-o", "out.wav", in: dir)
            #expect(result.status == 0, "\(result.stderr)")
            let (info, buffer) = try AudioFile.read(path: dir.appendingPathComponent("out.wav").path)
            #expect(info.sampleRate == rate && info.frameCount == mic.count)
            let out = Array(buffer.channel(0))
            let last = (mic.count - Int(2 * rate))..<mic.count
            #expect(20 * log10(rms(mic[last]) / rms(out[last])) > 20)
        }
    }

    @Test func badInputGetsOneLineAndNoOutput() throws {
        try withTemporaryDirectory { dir in
            try AudioFile.write(AudioBuffer(channels: [noise(count: 16_000, seed: 1)]), to: dir.appendingPathComponent("mic.wav").path, sampleRate: 16_000)
            try AudioFile.write(AudioBuffer(channels: [noise(count: 96_000, seed: 1)]), to: dir.appendingPathComponent("hi.wav").path, sampleRate: 96_000)
            for arguments in [["aec", "--mic", "mic.wav", "--far", "missing.wav", "-o", "out.wav"],
                              ["aec", "--mic", "hi.wav", "--far", "mic.wav", "-o", "out.wav"],
                              ["aec", "--mic", "mic.wav", "--far", "mic.wav", "-o", "out.wav", "--tail", "5"],
                              ["aec", "--mic", "mic.wav", "--far", "mic.wav", "-o", "out.wav", "--overestimate", "25"],
                              ["aec", "--mic", "mic.wav", "--far", "mic.wav", "-o", "out.wav", "--overestimate", "nan"],
                              ["aec", "--mic", "mic.wav", "--far", "mic.wav", "-o", "out.wav", "--echo-mask", "1.5"],
                              ["aec", "--mic", "mic.wav", "--far", "mic.wav", "-o", "out.wav", "--echo-mask", "nan"],
                              ["aec", "--mic", "mic.wav", "--far", "mic.wav", "-o", "out.wav", "--comfort-noise", "20"],
                              ["aec", "--mic", "mic.wav", "--far", "mic.wav", "-o", "out.wav", "--comfort-noise", "nan"],
                              ["aec", "--mic", "mic.wav", "--far", "mic.wav", "-o", "out.wav", "--comfort-noise", "loud"]] {
                let result = try runProgram(earshotPath, arguments, directory: dir)
                #expect(result.status == 2, "\(arguments): \(result.stderr)")
                #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
                #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("out.wav").path))
            }
        }
    }
}
