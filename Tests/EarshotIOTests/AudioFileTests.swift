import EarshotCore
import EarshotIO
import EarshotTestSupport
import Foundation
import Testing

@Suite struct AudioFileTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let ext: String, format: SampleFormat, tolerance: Float
        var testDescription: String { "\(ext) \(format)" }
    }

    @Test(arguments: [
        Case(ext: "wav", format: .s16, tolerance: 1.0 / 32768),
        Case(ext: "wav", format: .s24, tolerance: 1.0 / 8_388_608),
        Case(ext: "wav", format: .f32, tolerance: 0),
        Case(ext: "flac", format: .s16, tolerance: 1.0 / 32768),
        Case(ext: "flac", format: .s24, tolerance: 1.0 / 8_388_608),
        Case(ext: "aiff", format: .s16, tolerance: 1.0 / 32768),
        Case(ext: "caf", format: .f32, tolerance: 0),
    ])
    func writesAndReadsBack(_ c: Case) throws {
        try withTemporaryDirectory { dir in
            let left = sine(frequencyHz: 440, sampleRate: 44_100, count: 10_000, amplitude: 0.5)
            let right = noise(count: 10_000, seed: 5)
            let path = dir.appendingPathComponent("x.\(c.ext)").path
            try AudioFile.write(AudioBuffer(channels: [left, right]), to: path, sampleRate: 44_100, sampleFormat: c.format)
            let (info, buffer) = try AudioFile.read(path: path)
            #expect(info.sampleRate == 44_100 && info.channelCount == 2 && info.frameCount == 10_000)
            #expect(info.sampleFormat == c.format)
            let back = buffer.toArrays()
            let worst = zip(back[0] + back[1], left + right).map { abs($0 - $1) }.max()!
            #expect(worst <= c.tolerance)
            #expect(try contents(of: dir) == ["x.\(c.ext)"], "no temporary file remains")
        }
    }

    @Test func oggVorbisIsLossyButClose() throws {
        try withTemporaryDirectory { dir in
            let tone = sine(frequencyHz: 1000, sampleRate: 48_000, count: 48_000, amplitude: 0.5)
            let path = dir.appendingPathComponent("x.ogg").path
            try AudioFile.write(AudioBuffer(channels: [tone]), to: path, sampleRate: 48_000)
            let (info, buffer) = try AudioFile.read(path: path)
            #expect(info.sampleFormat == .vorbis && info.frameCount == 48_000)
            let error = zip(buffer.channel(0), tone).map { Double($0 - $1) * Double($0 - $1) }.reduce(0, +)
            let signal = tone.map { Double($0) * Double($0) }.reduce(0, +)
            #expect(10 * log10(signal / error) > 20, "Vorbis keeps a pure tone above 20 dB SNR")
        }
    }

    @Test func streamingReadEqualsWholeRead() throws {
        try withTemporaryDirectory { dir in
            let path = dir.appendingPathComponent("long.wav").path
            try AudioFile.write(AudioBuffer(channels: [noise(count: 100_003, seed: 9)]), to: path, sampleRate: 16_000, sampleFormat: .f32)
            let whole = try AudioFile.read(path: path).buffer.toArrays()[0]
            let reader = try AudioFileReader(path: path)
            let block = AudioBuffer(channelCount: 1, capacityFrames: 333)
            var streamed: [Float] = []
            while true {
                let got = try reader.read(into: block.block())
                if got == 0 { break }
                streamed += block.channel(0)[..<got]
            }
            #expect(streamed == whole)
        }
    }

    @Test func badFilesFailWithTheirOwnError() throws {
        try withTemporaryDirectory { dir in
            let missing = dir.appendingPathComponent("missing.wav").path
            #expect(throws: EarshotError.fileNotFound(path: missing)) { try AudioFileReader(path: missing) }

            let text = dir.appendingPathComponent("notes.wav")
            try "these are not samples\n".write(to: text, atomically: true, encoding: .utf8)
            #expect { try AudioFileReader(path: text.path) } throws: {
                if case .unreadableAudio = $0 as? EarshotError { return true } else { return false }
            }

            let empty = dir.appendingPathComponent("empty.wav")
            try writeFloatWAV([], sampleRate: 16_000, channels: 1, to: empty)
            #expect(throws: EarshotError.emptyAudio(path: empty.path)) { try AudioFileReader(path: empty.path) }

            let whole = dir.appendingPathComponent("whole.wav")
            try AudioFile.write(AudioBuffer(channels: [noise(count: 16_000, seed: 1)]), to: whole.path, sampleRate: 16_000)
            let cut = dir.appendingPathComponent("cut.wav")
            try Data(try Data(contentsOf: whole).prefix(20_000)).write(to: cut)
            #expect { try AudioFileReader(path: cut.path) } throws: {
                guard case .truncatedAudio(_, let expected, let actual) = $0 as? EarshotError else { return false }
                return expected == 16_000 && actual == 9978
            }

            var samples = noise(count: 1000, seed: 2)
            samples[700] = .nan
            let nan = dir.appendingPathComponent("nan.wav")
            try writeFloatWAV(samples, sampleRate: 16_000, channels: 1, to: nan)
            #expect(throws: EarshotError.nonFiniteSamples(path: nan.path, frame: 700)) { try AudioFile.read(path: nan.path) }

            samples[700] = 0
            samples[10] = -.infinity
            try writeFloatWAV(samples, sampleRate: 16_000, channels: 1, to: nan)
            #expect(throws: EarshotError.nonFiniteSamples(path: nan.path, frame: 10)) { try AudioFile.read(path: nan.path) }

            let absurd = dir.appendingPathComponent("absurd.wav")
            try writeFloatWAV(samples, sampleRate: 10_000_000, channels: 1, to: absurd)
            #expect(throws: EarshotError.invalidSampleRate(10_000_000)) { try AudioFileReader(path: absurd.path) }
        }
    }

    @Test func writerLeavesNothingBehindUnlessFinished() throws {
        try withTemporaryDirectory { dir in
            let path = dir.appendingPathComponent("out.wav").path
            do {
                let writer = try AudioFileWriter(path: path, format: OutputFormat(container: .wav), sampleRate: 16_000, channelCount: 1)
                try writer.write(AudioBuffer(channels: [noise(count: 500, seed: 3)]).block())
                #expect(!FileManager.default.fileExists(atPath: path), "nothing at the destination before finish")
            }
            #expect(try contents(of: dir).isEmpty, "a dropped writer removes its temporary file")

            let writer = try AudioFileWriter(path: path, format: OutputFormat(container: .wav, sampleFormat: .f32), sampleRate: 16_000, channelCount: 1)
            let bad = AudioBuffer(channels: [[0, .nan]])
            #expect(throws: EarshotError.nonFiniteSamples(path: path, frame: 1)) { try writer.write(bad.block()) }
            writer.discard()
            #expect(try contents(of: dir).isEmpty)
        }
    }

    @Test func refusesFormatsThatCannotBeWritten() throws {
        try withTemporaryDirectory { dir in
            #expect(throws: EarshotError.self) { try AudioContainer(fileExtension: "mp4") }
            #expect(throws: EarshotError.self) {
                try AudioFileWriter(path: dir.appendingPathComponent("x.flac").path,
                                    format: OutputFormat(container: .flac, sampleFormat: .f32), sampleRate: 16_000, channelCount: 1)
            }
            #expect(throws: EarshotError.invalidSampleRate(0)) {
                try AudioFileWriter(path: dir.appendingPathComponent("x.wav").path,
                                    format: OutputFormat(container: .wav), sampleRate: 0, channelCount: 1)
            }
            #expect(throws: EarshotError.self) {
                try AudioFileWriter(path: dir.appendingPathComponent("no/such/dir/x.wav").path,
                                    format: OutputFormat(container: .wav), sampleRate: 16_000, channelCount: 1)
            }
            let leftover = try contents(of: dir)
            #expect(leftover.isEmpty)
        }
    }
}

/// An output that names an input, however spelled, is refused before anything is written.
@Suite struct OutputPathTests {
    @Test func theSameFileUnderAnyNameIsRefused() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("earshot-output-\(getpid())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let input = folder.appendingPathComponent("in.wav").path
        FileManager.default.createFile(atPath: input, contents: Data([1]))
        try FileManager.default.createSymbolicLink(atPath: folder.appendingPathComponent("link.wav").path, withDestinationPath: input)
        try FileManager.default.linkItem(atPath: input, toPath: folder.appendingPathComponent("hard.wav").path)
        for output in [input, folder.path + "/./in.wav", folder.appendingPathComponent("link.wav").path, folder.appendingPathComponent("hard.wav").path] {
            #expect(throws: EarshotError.outputIsInput(output: output, input: input)) { try OutputPath.refuseOverwriting(output, inputs: [nil, input]) }
        }
        try OutputPath.refuseOverwriting(folder.appendingPathComponent("out.wav").path, inputs: [input])
        try OutputPath.refuseOverwriting("-", inputs: ["-"])
        #expect(throws: EarshotError.self) { try OutputPath.makeFolder(input) }
    }
}
