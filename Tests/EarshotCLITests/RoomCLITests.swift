import EarshotCore
import EarshotIO
import EarshotTestSupport
import Foundation
import Testing

@Suite struct RoomCommands {
    @Test func simulateThenAnalyze() throws {
        try withTemporaryDirectory { dir in
            let sim = try earshot("room", "simulate", "--size", "5x4x3", "--rt60", "0.4", "--source", "1,1.5,1.2",
                                  "--mic", "3.5,2.6,1.6", "--rate", "8000", "-o", "ir.wav", in: dir)
            #expect(sim.status == 0, "\(sim.stderr)")
            let analysis = try earshot("room", "analyze", "ir.wav", "--format", "json", in: dir)
            #expect(analysis.status == 0)
            struct Channel: Decodable { struct Band: Decodable { var bandHz: Double?; var t30: Double? }; var bands: [Band] }
            let channels = try JSONDecoder().decode([Channel].self, from: analysis.stdoutData)
            let t30 = try #require(channels.first?.bands.first?.t30)
            #expect(abs(t30 - 0.4) / 0.4 < 0.1, "T30 \(t30)")
            let text = try earshot("room", "analyze", "ir.wav", in: dir)
            #expect(text.stdout.contains("T30") && text.stdout.contains("1 kHz"))
        }
    }

    @Test func iterateIsExactWithoutNormalization() throws {
        try withTemporaryDirectory { dir in
            var random = SeededRandom(seed: 3)
            let source = (0..<2000).map { _ in Float.random(in: -0.5...0.5, using: &random) }
            var ir = (0..<200).map { i in Float.random(in: -0.3...0.3, using: &random) * exp(-Float(i) / 40) }
            ir[0] = 0.8
            try AudioFile.write(AudioBuffer(channels: [source]), to: dir.appendingPathComponent("src.wav").path, sampleRate: 16_000, sampleFormat: .f32)
            // The response at another rate is resampled first; here it matches, so the result is exact.
            try AudioFile.write(AudioBuffer(channels: [ir, ir.map { -$0 }]), to: dir.appendingPathComponent("ir.wav").path, sampleRate: 16_000, sampleFormat: .f32)
            let result = try earshot("room", "iterate", "src.wav", "--ir", "ir.wav", "--generations", "4", "--normalize", "none",
                                     "-o", "out.wav", "--all", "gens", in: dir)
            #expect(result.status == 0, "\(result.stderr)")
            let out = try AudioFile.read(path: dir.appendingPathComponent("out.wav").path)
            #expect(out.info.channelCount == 2 && out.info.frameCount == 2000 + 4 * 199)
            var expected = source.map(Double.init)
            for _ in 0..<4 {
                var next = [Double](repeating: 0, count: expected.count + ir.count - 1)
                for (j, h) in ir.enumerated() { for (i, x) in expected.enumerated() { next[i + j] += x * Double(h) } }
                expected = next
            }
            var error = 0.0, energy = 0.0
            for i in expected.indices {
                error += pow(Double(out.buffer.channel(0)[i]) - expected[i], 2)
                energy += expected[i] * expected[i]
            }
            #expect((error / energy).squareRoot() < 1e-4)
            #expect(zip(out.buffer.channel(0), out.buffer.channel(1)).allSatisfy { abs($0 - $1) < 1e-6 }, "(−h)⁴ = h⁴")
            #expect(try contents(of: dir.appendingPathComponent("gens")) == (1...4).map { "generation-0\($0).wav" })
        }
    }

    @Test func responseAtAnotherRateIsResampled() throws {
        try withTemporaryDirectory { dir in
            try AudioFile.write(AudioBuffer(channels: [(0..<16_000).map { Float(sin(Double($0) * 0.05)) * 0.3 }]),
                                to: dir.appendingPathComponent("src.wav").path, sampleRate: 16_000)
            var ir = [Float](repeating: 0, count: 4800)  // 0.1 s at 48 kHz: a pulse and an echo
            ir[0] = 1
            ir[2400] = 0.5
            try AudioFile.write(AudioBuffer(channels: [ir]), to: dir.appendingPathComponent("ir48k.wav").path, sampleRate: 48_000, sampleFormat: .f32)
            let result = try earshot("room", "iterate", "src.wav", "--ir", "ir48k.wav", "--generations", "2", "--trim", "-o", "out.flac", in: dir)
            #expect(result.status == 0, "\(result.stderr)")
            let out = try AudioFile.read(path: dir.appendingPathComponent("out.flac").path)
            #expect(out.info.sampleRate == 16_000 && out.info.sampleFormat == .s24)
            // The resampled response lasts 1600 frames: two generations add at most 2 · 1599.
            #expect(out.info.frameCount > 16_000 && out.info.frameCount <= 16_000 + 2 * 1599)
        }
    }

    @Test func sweepRecordedElsewhereIsMeasuredOffline() throws {
        try withTemporaryDirectory { dir in
            let sweep = try earshot("room", "sweep", "--sweep-seconds", "2", "--rate", "16000", "--start-hz", "50",
                                    "--end-hz", "7000", "--silence-seconds", "1", "-o", "sweep.wav", in: dir)
            #expect(sweep.status == 0, "\(sweep.stderr)")
            // "Play it in a room": a 3-tap echo, 20 samples late.
            let played = try AudioFile.read(path: dir.appendingPathComponent("sweep.wav").path).buffer.toArrays()[0]
            var room = [Float](repeating: 0, count: played.count)
            for i in played.indices {
                if i >= 20 { room[i] += played[i - 20] }
                if i >= 420 { room[i] += 0.5 * played[i - 420] }
                if i >= 1620 { room[i] -= 0.25 * played[i - 1620] }
            }
            try AudioFile.write(AudioBuffer(channels: [room]), to: dir.appendingPathComponent("rec.wav").path, sampleRate: 16_000, sampleFormat: .f32)
            let measure = try earshot("room", "measure", "--recorded", "rec.wav", "--sweep-seconds", "2", "--rate", "16000",
                                      "--start-hz", "50", "--end-hz", "7000", "--response-seconds", "0.5", "-o", "ir.wav",
                                      "--harmonics", "harm", in: dir)
            #expect(measure.status == 0, "\(measure.stderr)")
            let ir = try AudioFile.read(path: dir.appendingPathComponent("ir.wav").path).buffer.toArrays()[0]
            #expect(ir.count == 8000)
            let strongest = ir.indices.max { abs(ir[$0]) < abs(ir[$1]) }!
            #expect(strongest == 20)
            #expect(abs(ir[420] / ir[20] - 0.5) < 0.02 && abs(ir[1620] / ir[20] + 0.25) < 0.02)
            #expect(try contents(of: dir.appendingPathComponent("harm")).count == 4)
        }
    }

    @Test(arguments: [
        (["room", "iterate", "src.wav", "--ir", "missing.wav", "--generations", "2", "-o", "o.wav"], "no such file"),
        (["room", "iterate", "src.wav", "--ir", "silent.wav", "--generations", "2", "-o", "o.wav"], "silent"),
        (["room", "iterate", "src.wav", "--ir", "three.wav", "--generations", "2", "-o", "o.wav"], "cannot convolve"),
        (["room", "iterate", "src.wav", "--ir", "ir.wav", "--generations", "0", "-o", "o.wav"], "--generations"),
        (["room", "iterate", "src.wav", "--ir", "ir.wav", "--generations", "40", "--normalize", "none", "-o", "o.flac"], "clip"),
        (["room", "simulate", "--size", "5x4", "--rt60", "0.5", "--source", "1,1,1", "--mic", "2,2,2", "-o", "o.wav"], "--size"),
        (["room", "simulate", "--size", "5x4x3", "--rt60", "0.5", "--source", "9,1,1", "--mic", "2,2,2", "-o", "o.wav"], "inside"),
        (["room", "simulate", "--size", "5x4x3", "--source", "1,1,1", "--mic", "2,2,2", "-o", "o.wav"], "exactly one"),
        // The library says what is wrong; the command line adds the option that helps.
        (["room", "simulate", "--size", "1x1x1", "--absorption", "0.01", "--source", "0.5,0.5,0.5", "--mic", "0.3,0.3,0.3", "--rate", "8000", "-o", "o.wav"], "image sources (at most 1e+07): use a larger room, a shorter RT60 or duration, or a lower reflection order (--max-order)"),
        (["room", "measure", "--recorded", "src.wav", "--sweep-seconds", "5", "-o", "o.wav"], "longer than the sweep"),
        (["room", "analyze", "silent.wav"], "silent"),
        (["room", "iterate", "src.wav", "--ir", "ir.wav", "--generations", "2", "-o", "o.wav", "--all", "ir.wav"], "not a folder"),
    ])
    func badRoomInputFailsCleanly(arguments: [String], message: String) throws {
        try withTemporaryDirectory { dir in
            try AudioFile.write(AudioBuffer(channels: [(0..<1600).map { Float(sin(Double($0))) * 0.3 }]), to: dir.appendingPathComponent("src.wav").path, sampleRate: 16_000)
            try AudioFile.write(AudioBuffer(channels: [[1, 0.6, 0.3, 0.1]]), to: dir.appendingPathComponent("ir.wav").path, sampleRate: 16_000, sampleFormat: .f32)
            try AudioFile.write(AudioBuffer(channels: [[0, 0, 0]]), to: dir.appendingPathComponent("silent.wav").path, sampleRate: 16_000)
            try AudioFile.write(AudioBuffer(channels: [[1, 0], [1, 0], [1, 0]]), to: dir.appendingPathComponent("three.wav").path, sampleRate: 16_000)
            try AudioFile.write(AudioBuffer(channels: [[0.1], [0.2]]), to: dir.appendingPathComponent("stereo.wav").path, sampleRate: 16_000)
            let iterateStereo = arguments.contains("three.wav")
            let args = iterateStereo ? arguments.map { $0 == "src.wav" ? "stereo.wav" : $0 } : arguments
            let before = try contents(of: dir)
            let result = try runProgram(earshotPath, args, directory: dir)
            #expect(result.status == 2, "status \(result.status): \(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1 && result.stderr.contains(message), "\(result.stderr)")
            #expect(try contents(of: dir) == before)
        }
    }
}
