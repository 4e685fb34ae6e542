import EarshotCore
import EarshotDSP
import EarshotTestSupport
import Testing

@Suite struct STFTTests {
    struct Case: CustomTestStringConvertible, Sendable {
        let frame: Int, hop: Int, analysis: Window, synthesis: Window
        var testDescription: String { "\(analysis)/\(synthesis) \(frame)/\(hop)" }
    }

    static let cases: [Case] = [
        Case(frame: 512, hop: 256, analysis: .sqrtHann, synthesis: .sqrtHann),
        Case(frame: 512, hop: 128, analysis: .hann, synthesis: .hann),
        Case(frame: 256, hop: 128, analysis: .hann, synthesis: .rectangular),
        Case(frame: 400, hop: 100, analysis: .hamming, synthesis: .hamming),
        Case(frame: 384, hop: 96, analysis: .blackman, synthesis: .rectangular),
        Case(frame: 128, hop: 32, analysis: .kaiser(beta: 6), synthesis: .sqrtHann),
        Case(frame: 64, hop: 64, analysis: .rectangular, synthesis: .rectangular),
        Case(frame: 100, hop: 30, analysis: .hann, synthesis: .hann),  // hop does not divide the frame
    ]

    @Test(arguments: cases)
    func reconstructsPerfectlyInAnyBlockSize(_ c: Case) throws {
        let signal = noise(count: 6000, seed: 7)
        let configuration = STFTConfiguration(frameSize: c.frame, hop: c.hop, analysis: c.analysis, synthesis: c.synthesis)
        for blockSizes in [[1], [7], [64], [480], [4096], [3, 250, 1, 77, 1024]] {
            var processor = SpectralProcessor(configuration: configuration, stage: IdentitySpectralStage())
            let output = try run(&processor, over: signal, blockSizes: blockSizes)
            let delay = processor.latencySamples
            #expect(delay == c.frame - 1 - configuration.synthesisStart)
            var worst: Float = 0
            for n in 0..<(signal.count - delay) { worst = max(worst, abs(output[n + delay] - signal[n])) }
            #expect(worst <= 1e-5, "blocks \(blockSizes): error \(worst)")
            #expect(output[..<delay].allSatisfy { abs($0) < 1e-6 }, "output before the delay must be silence")
        }
    }

    @Test func lowDelayWindowsReconstructWithAShortDelay() throws {
        for (frame, hop) in [(512, 64), (1536, 192), (256, 32)] {
            let configuration = STFTConfiguration.lowDelay(frameSize: frame, hop: hop)
            let signal = noise(count: 8000, seed: 13)
            for blockSizes in [[1], [64], [7, 480]] {
                var processor = SpectralProcessor(configuration: configuration, stage: IdentitySpectralStage())
                let output = try run(&processor, over: signal, blockSizes: blockSizes)
                let delay = processor.latencySamples
                #expect(delay <= 2 * hop, "frame \(frame): \(delay) samples")
                let worst = (0..<(signal.count - delay)).map { abs(output[$0 + delay] - signal[$0]) }.max()!
                #expect(worst <= 1e-5, "frame \(frame) hop \(hop) blocks \(blockSizes): \(worst)")
            }
        }
    }

    @Test func refusesWindowsThatOverlapToZero() {
        // Hann windows with no overlap vanish at the frame edges: nothing recovers those samples.
        let processor = SpectralProcessor(
            configuration: STFTConfiguration(frameSize: 64, hop: 64, analysis: .hann, synthesis: .hann),
            stage: IdentitySpectralStage())
        #expect(throws: DSPError.self) {
            try processor.prepare(ProcessSpec(sampleRate: 16_000, maximumBlockFrames: 64, channelCount: 1))
        }
    }

    @Test func spectralStageSeesEveryFrame() throws {
        struct LowPassStage: SpectralStage {
            var frames = 0
            mutating func prepare(binCount: Int, spec: ProcessSpec) throws {}
            mutating func process(spectrum: UnsafeMutableBufferPointer<Float>, channel: Int) {
                frames += 1
                for i in (spectrum.count / 4)..<spectrum.count { spectrum[i] = 0 }  // remove the upper 3/4 of bins
            }
            mutating func reset() {}
        }
        let rate = 16_000.0
        let low = sine(frequencyHz: 500, sampleRate: rate, count: 8000, amplitude: 0.3)
        let high = sine(frequencyHz: 6000, sampleRate: rate, count: 8000, amplitude: 0.3)
        var processor = SpectralProcessor(configuration: STFTConfiguration(frameSize: 256, hop: 64), stage: LowPassStage())
        let output = try run(&processor, over: zip(low, high).map(+), blockSizes: [160])
        #expect(processor.stage.frames == 8000 / 64)
        let d = processor.latencySamples
        let residual = (1000..<7000).map { output[$0 + d] - low[$0] }
        #expect(rms(residual[...]) < 0.01 * rms(low[...]), "the 6 kHz tone is removed and the 500 Hz tone kept")
    }

    @Test func analyzerMatchesDirectFFT() {
        let configuration = STFTConfiguration(frameSize: 256, hop: 128, analysis: .hann)
        var analyzer = STFTAnalyzer(configuration: configuration)
        let signal = noise(count: 1024, seed: 3)
        var frames: [[Float]] = []
        signal.withUnsafeBufferPointer { analyzer.analyze($0) { frames.append(Array($0.spectrum)) } }
        #expect(frames.count == 8)
        // Frame 3 ends at sample 4·128 − 1: it covers samples 256…511.
        let reference = RealFFT(size: 256)
        let window = Window.hann.coefficients(count: 256)
        for i in 0..<256 { reference.time[i] = signal[256 + i] * window[i] }
        reference.forward()
        for k in 0..<reference.spectrum.count { #expect(abs(frames[3][k] - reference.spectrum[k]) < 1e-4) }
    }
}
