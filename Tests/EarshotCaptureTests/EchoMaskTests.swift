import EarshotCapture
import Foundation
import Testing

@Suite struct EchoMaskTests {
    struct Reference: Decodable {
        let frames: Int
        let microphone: [[Float]], output: [[Float]], echo: [[Float]], gains: [[Float]]
    }

    /// The shipped weights give PyTorch's gains, frame after frame (`training/echo_mask.py export`
    /// wrote the fixture from the same weights: seeded powers, echo alone and then a near talker).
    @Test func givesTheGainsPyTorchGives() throws {
        let url = try #require(Bundle.module.url(forResource: "echo_mask_parity", withExtension: "json", subdirectory: "Fixtures"))
        let reference = try JSONDecoder().decode(Reference.self, from: Data(contentsOf: url))
        let mask = try EchoMask.bundled(), state = mask.makeState()
        var gains = [Float](repeating: 0, count: EchoMask.bins)
        var worst: Float = 0, spread: Float = 0
        for t in 0..<reference.frames {
            mask.gains(microphone: reference.microphone[t], output: reference.output[t], echo: reference.echo[t], state: state, into: &gains)
            for k in 0..<EchoMask.bins {
                worst = max(worst, abs(gains[k] - reference.gains[t][k]))
                spread = max(spread, abs(reference.gains[t][k] - reference.gains[0][k]))
            }
        }
        #expect(worst < 1e-4, "largest difference from PyTorch: \(worst)")
        #expect(spread > 0.1, "the fixture should move the gains: \(spread)")
    }
}
