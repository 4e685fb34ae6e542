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

    /// The gains' filter length comes with the weights: the filter they were trained through.
    @Test func readsTheFilterItWasTrainedThrough() throws {
        func model(stft: String?) throws -> SuppressorNetwork {
            let (hidden, bins) = (4, 8)
            var shapes: [String: [Int]] = ["input.weight": [hidden, bins], "input.bias": [hidden],
                                           "output.weight": [bins, hidden], "output.bias": [bins]]
            for name in ["gru1", "gru2"] {
                for part in ["weight_ih", "weight_hh"] { shapes["\(name).\(part)"] = [3 * hidden, hidden] }
                for part in ["bias_ih", "bias_hh"] { shapes["\(name).\(part)"] = [3 * hidden] }
            }
            var header: [String: Any] = [:], offset = 0
            for (name, shape) in shapes.sorted(by: { $0.key < $1.key }) {
                let bytes = 4 * shape.reduce(1, *)
                header[name] = ["dtype": "F32", "shape": shape, "data_offsets": [offset, offset + bytes]]
                offset += bytes
            }
            if let stft { header["__metadata__"] = ["stft": stft] }
            return try SuppressorNetwork(safeTensors(header: header, body: Data(count: offset)))
        }
        #expect(try model(stft: nil).gainTaps == 64)
        #expect(try model(stft: #"{"rate": 16000, "frame": 512, "hop": 64}"#).gainTaps == 64)
        #expect(try model(stft: #"{"rate": 16000, "frame": 512, "hop": 64, "gainTaps": 128}"#).gainTaps == 128)
        for bad in [#"{"gainTaps": 0}"#, #"{"gainTaps": 300}"#, #"{"gainTaps": "long"}"#, "not json"] {
            #expect(throws: ModelError.self) { try model(stft: bad) }
        }
    }
}
