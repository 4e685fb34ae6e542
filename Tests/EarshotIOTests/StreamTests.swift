import Atomics
import EarshotCore
import EarshotDSP
import EarshotIO
import EarshotTestSupport
import Foundation
import Testing

@Suite struct ResamplerTests {
    func resample(_ signal: [Float], from: Double, to: Double, blockFrames: Int) throws -> [Float] {
        let source = try ResampledSource(MemorySource(channels: [signal], sampleRate: from), sampleRate: to, inputBlockFrames: blockFrames)
        let sink = MemorySink(channelCount: 1)
        let chain = ProcessorChain()
        try Runner(blockFrames: 1000).run(source: source, chain: chain, sink: sink)
        return sink.channels[0]
    }

    @Test func keepsPitchLevelAndLength() throws {
        let tone = sine(frequencyHz: 1000, sampleRate: 48_000, count: 48_000, amplitude: 0.5)
        let out = try resample(tone, from: 48_000, to: 16_000, blockFrames: 4096)
        #expect(abs(out.count - 16_000) <= 1)
        let fft = RealFFT(size: 8000)
        let (re, im) = fft.transform(Array(out[4000..<12_000]))
        let power = zip(re, im).map { $0 * $0 + $1 * $1 }
        #expect(power.firstIndex(of: power.max()!)! == 500, "1 kHz at 2 Hz per bin")
        let level = (out[1000..<15_000].map { Double($0 * $0) }.reduce(0, +) / 14_000).squareRoot()
        #expect(abs(level - 0.5 / 2.0.squareRoot()) < 0.005)
        // soxr aligns its output: the tone starts where it started.
        let expected = sine(frequencyHz: 1000, sampleRate: 16_000, count: 16_000, amplitude: 0.5)
        let aligned = zip(out[2000..<14_000], expected[2000..<14_000]).map { abs($0 - $1) }.max()!
        #expect(aligned < 0.01)
    }

    @Test func sameOutputWhateverTheInputBlocks() throws {
        let signal = noise(count: 30_000, seed: 4)
        let reference = try resample(signal, from: 44_100, to: 48_000, blockFrames: 4096)
        for blocks in [1, 7, 480] {
            let out = try resample(signal, from: 44_100, to: 48_000, blockFrames: blocks)
            #expect(out.count == reference.count)
            #expect(zip(out, reference).map { abs($0 - $1) }.max()! < 1e-5, "blocks of \(blocks)")
        }
    }

    @Test func refusesAbsurdRates() {
        #expect(throws: EarshotError.invalidSampleRate(0)) { try Resampler(inputRate: 0, outputRate: 16_000, channelCount: 1) }
        #expect(throws: EarshotError.invalidSampleRate(10_000_000)) {
            try Resampler(inputRate: 16_000, outputRate: 10_000_000, channelCount: 1)
        }
    }

    @Test func mapsChannels() throws {
        let stereo = MemorySource(channels: [[1, 0.5], [0, -0.5]], sampleRate: 16_000)
        let mono = try ChannelMappedSource(stereo, channelCount: 1)
        let out = AudioBuffer(channelCount: 1, capacityFrames: 4)
        #expect(try mono.read(into: out.block()) == 2)
        #expect(Array(out.channel(0)[..<2]) == [0.5, 0])
        let up = try ChannelMappedSource(MemorySource(channels: [[0.25, 0.75]], sampleRate: 16_000), channelCount: 3)
        let three = AudioBuffer(channelCount: 3, capacityFrames: 2)
        _ = try up.read(into: three.block())
        #expect(three.toArrays() == [[0.25, 0.75], [0.25, 0.75], [0.25, 0.75]])
        #expect(throws: EarshotError.unsupportedChannelMapping(from: 2, to: 6)) {
            try ChannelMappedSource(MemorySource(channels: [[0], [0]], sampleRate: 16_000), channelCount: 6)
        }
    }
}

@Suite struct RawPCMTests {
    /// Writes `bytes` to a file and opens it for reading, as a pipe would present them.
    func descriptor(for bytes: [UInt8], in dir: URL) throws -> Int32 {
        let url = dir.appendingPathComponent("in.raw")
        try Data(bytes).write(to: url)
        return open(url.path, O_RDONLY)
    }

    @Test(arguments: RawEncoding.allCases)
    func roundTrips(encoding: RawEncoding) throws {
        try withTemporaryDirectory { dir in
            let left = noise(count: 1001, seed: 1), right = noise(count: 1001, seed: 2)
            let outURL = dir.appendingPathComponent("out.raw")
            let out = open(outURL.path, O_WRONLY | O_CREAT, 0o644)
            try RawPCMWriter(descriptor: out, encoding: encoding).write(AudioBuffer(channels: [left, right]).block())
            close(out)
            let input = open(outURL.path, O_RDONLY)
            defer { close(input) }
            let reader = try RawPCMReader(descriptor: input, encoding: encoding, sampleRate: 16_000, channelCount: 2)
            let back = AudioBuffer(channelCount: 2, capacityFrames: 2000)
            #expect(try reader.read(into: back.block()) == 1001)
            #expect(try reader.read(into: back.block()) == 0)
            let tolerance: Float = encoding == .s16le ? 1.0 / 32768 : 0
            for (c, original) in [left, right].enumerated() {
                #expect(zip(back.channel(c)[..<1001], original).allSatisfy { abs($0 - $1) <= tolerance })
            }
        }
    }

    @Test func refusesBrokenStreams() throws {
        try withTemporaryDirectory { dir in
            let partial = try descriptor(for: [1, 2, 3], in: dir)  // 1.5 s16 samples
            defer { close(partial) }
            let reader = try RawPCMReader(descriptor: partial, encoding: .s16le, sampleRate: 16_000, channelCount: 1)
            #expect(throws: EarshotError.self) { try reader.read(into: AudioBuffer(channelCount: 1, capacityFrames: 8).block()) }

            let nanBits = Float.nan.bitPattern.littleEndian
            let nan = try descriptor(for: withUnsafeBytes(of: nanBits) { Array($0) }, in: dir)
            defer { close(nan) }
            let floatReader = try RawPCMReader(descriptor: nan, encoding: .f32le, sampleRate: 16_000, channelCount: 1)
            #expect(throws: EarshotError.nonFiniteSamples(path: "-", frame: 0)) {
                try floatReader.read(into: AudioBuffer(channelCount: 1, capacityFrames: 8).block())
            }
            #expect(throws: EarshotError.invalidSampleRate(0)) { try RawPCMReader(encoding: .s16le, sampleRate: 0, channelCount: 1) }
            #expect(throws: EarshotError.invalidChannelCount(0)) { try RawPCMReader(encoding: .s16le, sampleRate: 16_000, channelCount: 0) }
        }
    }

    @Test func sixteenBitOutputClipsAndRounds() throws {
        try withTemporaryDirectory { dir in
            let url = dir.appendingPathComponent("clip.raw")
            let fd = open(url.path, O_WRONLY | O_CREAT, 0o644)
            try RawPCMWriter(descriptor: fd, encoding: .s16le).write(AudioBuffer(channels: [[2, -2, 0.5]]).block())
            close(fd)
            let values = try Data(contentsOf: url).withUnsafeBytes { raw in
                (0..<3).map { Int16(littleEndian: raw.loadUnaligned(fromByteOffset: $0 * 2, as: Int16.self)) }
            }
            #expect(values == [32767, -32768, 16384])
        }
    }
}

@Suite struct RingBufferTests {
    @Test func wrapsAroundAndRespectsCapacity() {
        let ring = RingBuffer(minimumCapacity: 5)
        #expect(ring.capacity == 8)
        var out = [Float](repeating: 0, count: 8)
        for round in 0..<10 {
            let data = (0..<6).map { Float(round * 10 + $0) }
            #expect(data.withUnsafeBufferPointer { ring.write($0) } == 6)
            #expect(ring.availableToRead == 6 && ring.availableToWrite == 2)
            #expect(out.withUnsafeMutableBufferPointer { ring.read(into: $0) } == 6)
            #expect(Array(out[..<6]) == data)
        }
        let tooMuch = [Float](repeating: 1, count: 20)
        #expect(tooMuch.withUnsafeBufferPointer { ring.write($0) } == 8)
        #expect(tooMuch.withUnsafeBufferPointer { ring.write($0) } == 0)
    }

    @Test func producerAndConsumerThreadsAgree() async {
        let ring = RingBuffer(minimumCapacity: 1024)
        let total = 500_000
        let producer = Thread {
            var next = 0
            var chunk = [Float](repeating: 0, count: 97)
            while next < total {
                let count = min(97, total - next)
                for i in 0..<count { chunk[i] = Float(next + i) }
                let written = chunk.withUnsafeBufferPointer { ring.write(UnsafeBufferPointer(rebasing: $0[..<count])) }
                next += written
                if written == 0 { sched_yield() }
            }
        }
        producer.start()
        var expected = 0, inOrder = true
        var chunk = [Float](repeating: 0, count: 61)
        while expected < total {
            let read = chunk.withUnsafeMutableBufferPointer { ring.read(into: $0) }
            for i in 0..<read where chunk[i] != Float(expected + i) { inOrder = false }
            expected += read
            if read == 0 { sched_yield() }
        }
        #expect(inOrder && expected == total)
    }
}

@Suite struct DeviceTests {
    @Test func unknownDeviceIsAClearError() {
        #expect {
            try AudioDevices.find("no-such-device-\(UUID().uuidString)", direction: .input)
        } throws: { error in
            switch error as? EarshotError {
            case .deviceNotFound, .noDevices: true
            default: false
            }
        }
    }

    @Test func listingNeverFails() throws {
        let devices = try AudioDevices.all()
        #expect(devices.allSatisfy { $0.inputChannels > 0 || $0.outputChannels > 0 })
    }
}

@Suite struct RunnerTests {
    /// A chain with memory in every stage: any block-size dependence would show.
    func makeChain() -> ProcessorChain {
        ProcessorChain([
            BiquadFilter(.highPass, frequencyHz: 80, sampleRate: 16_000),
            SpectralProcessor(configuration: STFTConfiguration(frameSize: 128, hop: 32), stage: IdentitySpectralStage()),
            Gain(gainDB: -3),
            OutputLevelGuard(ceilingDBFS: -1),
        ])
    }

    @Test func fileModeAndStreamModeGiveIdenticalOutput() throws {
        try withTemporaryDirectory { dir in
            let left = noise(count: 24_011, seed: 21, amplitude: 0.9)
            let right = sine(frequencyHz: 300, sampleRate: 16_000, count: 24_011, amplitude: 0.5)
            let inputPath = dir.appendingPathComponent("in.wav").path
            try AudioFile.write(AudioBuffer(channels: [left, right]), to: inputPath, sampleRate: 16_000, sampleFormat: .f32)

            // File mode: file in, file out.
            let outputPath = dir.appendingPathComponent("out.wav").path
            let fileChain = makeChain()
            let reader = try AudioFileReader(path: inputPath)
            let writer = try AudioFileWriter(path: outputPath, format: OutputFormat(container: .wav, sampleFormat: .f32), sampleRate: 16_000, channelCount: 2)
            let report = try Runner().run(source: reader, chain: fileChain, sink: writer)
            #expect(report.inputFrames == 24_011 && report.outputFrames == 24_011)
            // A periodic square-root Hann starts at zero, so a 128-point frame delays by 126 samples.
            #expect(report.latencySamples == 126)
            let fileOutput = try AudioFile.read(path: outputPath).buffer.toArrays()

            // Stream mode: raw f32le in and out through descriptors, in every block size.
            let rawIn = dir.appendingPathComponent("in.raw")
            let fd = open(rawIn.path, O_WRONLY | O_CREAT, 0o644)
            try RawPCMWriter(descriptor: fd, encoding: .f32le).write(AudioBuffer(channels: [left, right]).block())
            close(fd)
            for blockFrames in [1, 7, 64, 480, 4096] {
                let rawOut = dir.appendingPathComponent("out-\(blockFrames).raw")
                let input = open(rawIn.path, O_RDONLY), output = open(rawOut.path, O_WRONLY | O_CREAT, 0o644)
                let chain = makeChain()
                try Runner(blockFrames: blockFrames).run(
                    source: try RawPCMReader(descriptor: input, encoding: .f32le, sampleRate: 16_000, channelCount: 2),
                    chain: chain, sink: RawPCMWriter(descriptor: output, encoding: .f32le))
                close(input)
                close(output)
                let streamed = try Data(contentsOf: rawOut).withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
                #expect(streamed.count == 2 * 24_011)
                let left = stride(from: 0, to: streamed.count, by: 2).map { streamed[$0] }
                let right = stride(from: 1, to: streamed.count, by: 2).map { streamed[$0] }
                #expect(left == fileOutput[0] && right == fileOutput[1], "blocks of \(blockFrames) differ from file mode")
            }
            // Latency compensation really aligned the output: apart from the (zero-latency)
            // high-pass, the sine comes back 3 dB down, in place.
            let highPass = BiquadFilter(.highPass, frequencyHz: 80, sampleRate: 16_000)
            try highPass.prepare(ProcessSpec(sampleRate: 16_000, maximumBlockFrames: right.count, channelCount: 1))
            let expected = AudioBuffer(channels: [right])
            var whole = expected.block()
            highPass.process(&whole)
            let gain = Float(Decibels.toAmplitude(-3))
            let worst = (1000..<23_000).map { abs(fileOutput[1][$0] - expected.channel(0)[$0] * gain) }.max()!
            #expect(worst < 0.01)
        }
    }

    @Test func failureLeavesNoOutputFile() throws {
        final class FailingSource: AudioSource {
            let sampleRate = 16_000.0, channelCount = 1
            var calls = 0
            func read(into block: AudioBlock) throws -> Int {
                calls += 1
                if calls > 3 { throw EarshotError.unreadableAudio(path: "test", reason: "broken on purpose") }
                block.clear()
                return block.frameCount
            }
        }
        try withTemporaryDirectory { dir in
            let writer = try AudioFileWriter(path: dir.appendingPathComponent("out.wav").path,
                                             format: OutputFormat(container: .wav), sampleRate: 16_000, channelCount: 1)
            let chain = ProcessorChain()
            #expect(throws: EarshotError.self) { try Runner().run(source: FailingSource(), chain: chain, sink: writer) }
            #expect(try contents(of: dir).isEmpty)
        }
    }

    @Test func stopsAtMaximumFramesAndOnRequest() throws {
        let source = MemorySource(channels: [noise(count: 10_000, seed: 1)], sampleRate: 16_000)
        let sink = MemorySink(channelCount: 1)
        let chain = ProcessorChain()
        let report = try Runner(blockFrames: 300, maximumFrames: 1000).run(source: source, chain: chain, sink: sink)
        #expect(report.inputFrames == 1000 && sink.channels[0].count == 1000 && sink.finished)
        let stop = ManagedAtomic(false)
        let stopped = MemorySink(channelCount: 1)
        let runner = Runner(blockFrames: 100, stop: stop, progress: { if $0 >= 500 { stop.store(true, ordering: .relaxed) } })
        try runner.run(source: source, chain: chain, sink: stopped)
        #expect(stopped.channels[0].count == 500)
    }
}
