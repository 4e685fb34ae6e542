import EarshotCore
import Foundation

/// The learned suppressor's network (trained by `make train-enhance`): per frame of the low-delay
/// STFT, the log power of the 257 bins up to 8 kHz → dense 128 (tanh) → GRU 128 → GRU 128 →
/// dense 257 (sigmoid): one gain per bin. Causal; its recurrent state is all it remembers.
///
/// The weights are immutable and shared; each channel keeps its own `State`. Inference is
/// OpenBLAS matrix–vector products over buffers allocated with the state, so `gains` neither
/// allocates nor locks.
public final class SuppressorNetwork: Sendable {
    /// Bins the network sees and sets: 0–8 kHz of a 512-point frame at 16 kHz (31.25 Hz apart;
    /// the 1536-point frame at 48 kHz has the same spacing).
    public let bins: Int
    public let hidden: Int
    /// Half the length of the impulse response each frame's gains are made (samples at 16 kHz;
    /// metadata `stft.gainTaps`): the filter the network was trained through, so the one to apply.
    public let gainTaps: Int
    private let input: DenseLayer
    private let recurrent: [GRULayer]
    private let output: DenseLayer

    /// One channel's recurrent memory and scratch.
    public typealias State = RecurrentState

    public func makeState() -> State { State(features: bins, hidden: hidden, layers: recurrent.count) }

    /// The network shipped with Earshot, read once.
    public static func bundled() throws -> SuppressorNetwork { try bundledNetwork.get() }

    private static let bundledNetwork = Result<SuppressorNetwork, any Error> {
        guard let url = Bundle.module.url(forResource: "Suppressor", withExtension: "safetensors") else {
            throw ModelError.missing(model: "the noise suppressor", file: "Suppressor.safetensors")
        }
        return try SuppressorNetwork(SafeTensors(contentsOf: url))
    }

    public init(_ model: SafeTensors) throws {
        guard let shape = model.tensors["input.weight"]?.shape, shape.count == 2, (1...1024).contains(shape[0]), (1...4096).contains(shape[1]) else {
            throw ModelError.unusableTensor("input.weight")
        }
        let (size, bins) = (shape[0], shape[1])
        input = try DenseLayer(model, "input", rows: size, columns: bins)
        recurrent = try ["gru1", "gru2"].map { try GRULayer(model, $0, inputs: size, size: size) }
        output = try DenseLayer(model, "output", rows: bins, columns: size)
        hidden = size
        self.bins = bins
        gainTaps = try Self.gainTaps(model.metadata["stft"])
        runBLASOnTheCallingThread()
    }

    /// Weights from before the metadata said otherwise were trained through ±4 ms (64 taps).
    private static func gainTaps(_ text: String?) throws -> Int {
        guard let text else { return 64 }
        guard let stft = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] else {
            throw ModelError.metadata(key: "stft", value: text, expected: "a JSON object")
        }
        guard let value = stft["gainTaps"] else { return 64 }
        guard let taps = value as? Int, (1...256).contains(taps) else {
            throw ModelError.metadata(key: "stft.gainTaps", value: "\(value)", expected: "a number of samples from 1 to 256")
        }
        return taps
    }

    /// Gains in 0…1 for `bins` bins from their powers, normalised by the analysis window's
    /// energy (Σw², so either frame size reads the same level). Advances `state` one frame.
    public func gains(power: UnsafePointer<Float>, state: State, into gains: UnsafeMutablePointer<Float>) {
        let features = state.features.baseAddress!
        for k in 0..<bins { features[k] = logPower(power[k]) }
        input.apply(features, into: state.layer.baseAddress!)
        for j in 0..<hidden { state.layer[j] = tanhf(state.layer[j]) }
        var x = UnsafePointer(state.layer.baseAddress!)
        for (gru, h) in zip(recurrent, state.hidden) {
            gru.step(x, h: h.baseAddress!, gi: state.gi.baseAddress!, gh: state.gh.baseAddress!)
            x = UnsafePointer(h.baseAddress!)
        }
        output.apply(x, into: gains)
        for k in 0..<bins { gains[k] = sigmoid(gains[k]) }
    }
}
