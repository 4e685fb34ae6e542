import EarshotCore
import EarshotDSP
import EarshotEnhance
import EarshotTestSupport
import Foundation
import Testing

@Suite struct SuppressorNetworkTests {
    /// The bundled network on the low-delay STFT gives, frame by frame, the gains the training
    /// script's PyTorch model gives (fixture written by training/train_suppressor.py).
    @Test func gainsMatchTheTrainingScript() throws {
        struct Fixture: Decodable { let input: [Float]; let frames: Int; let gains: [[Float]] }
        let url = try #require(Bundle.module.url(forResource: "suppressor_parity", withExtension: "json", subdirectory: "Fixtures"))
        let fixture = try JSONDecoder().decode(Fixture.self, from: Data(contentsOf: url))
        let network = try SuppressorNetwork.bundled()
        let state = network.makeState()
        let configuration = STFTConfiguration.lowDelay(frameSize: 512, hop: 64)
        let energy = configuration.analysisWindow.reduce(0) { $0 + $1 * $1 }
        var analyzer = STFTAnalyzer(configuration: configuration)
        var power = [Float](repeating: 0, count: network.bins), gains = power
        var frame = 0, worst: Float = 0
        fixture.input.withUnsafeBufferPointer { samples in
            analyzer.analyze(samples) { fft in
                for k in 0..<network.bins {
                    power[k] = (fft.spectrum[2 * k] * fft.spectrum[2 * k] + fft.spectrum[2 * k + 1] * fft.spectrum[2 * k + 1]) / energy
                }
                network.gains(power: power, state: state, into: &gains)
                for k in 0..<network.bins { worst = max(worst, abs(gains[k] - fixture.gains[frame][k])) }
                frame += 1
            }
        }
        #expect(frame == fixture.frames)
        #expect(worst < 1e-4, "largest gain difference \(worst)")
        // Not a constant: the fixture's gains vary, so a broken network cannot match by chance.
        let all = fixture.gains.joined()
        #expect((all.max() ?? 0) - (all.min() ?? 0) > 0.3)
    }

    @Test func refusesAModelOfTheWrongShape() throws {
        func model(_ tensors: [String: [Int]]) throws -> SafeTensors {
            var header: [String: Any] = [:], offset = 0
            for (name, shape) in tensors.sorted(by: { $0.key < $1.key }) {
                let bytes = 4 * shape.reduce(1, *)
                header[name] = ["dtype": "F32", "shape": shape, "data_offsets": [offset, offset + bytes]]
                offset += bytes
            }
            return try safeTensors(header: header, body: Data(count: offset))
        }
        #expect(throws: ModelError.self) { try SuppressorNetwork(model([:])) }
        // A first layer but recurrent layers of another width.
        #expect(throws: ModelError.self) {
            try SuppressorNetwork(model(["input.weight": [8, 16], "input.bias": [8], "gru1.weight_ih": [12, 4]]))
        }
    }
}
