import EarshotCore
import EarshotEnhance
import Foundation

/// The learned residual echo mask: per 5 ms frame of the echo canceller, the log powers of the
/// microphone, the linear filter's output and its echo estimate in the 81 bins up to 8 kHz (100 Hz
/// apart at every rate) → dense 128 (ReLU) → GRU 128 → dense 81 (logistic): a gain per bin that
/// takes what the linear filter cannot model — a distorting loudspeaker, a capture side's own gain
/// — and leaves the near talker. Causal; its recurrent state is all it remembers.
///
/// Trained by `training/echo_mask.py` on simulated echoes of LibriSpeech training speakers
/// (soft and linear loudspeakers, capture gain that drifts, moved paths, noise); judged on the
/// real device recordings and on a loudspeaker model it never heard (`docs/capture.md`).
///
/// The weights are immutable and shared; each canceller keeps its own `State`. `gains` neither
/// allocates nor locks.
public final class EchoMask: Sendable {
    /// Bins the network sees and sets: 0–8 kHz of the canceller's 160-point frame at 16 kHz.
    public static let bins = 81
    public let hidden: Int
    private let input: DenseLayer
    private let recurrent: GRULayer
    private let output: DenseLayer

    /// One canceller's recurrent memory and scratch.
    public typealias State = RecurrentState

    public func makeState() -> State { State(features: 3 * Self.bins, hidden: hidden, layers: 1) }

    /// The mask shipped with Earshot, read once.
    public static func bundled() throws -> EchoMask { try bundledMask.get() }

    private static let bundledMask = Result<EchoMask, any Error> {
        guard let url = Bundle.module.url(forResource: "EchoMask", withExtension: "safetensors") else {
            throw ModelError.missing(model: "the residual echo mask", file: "EchoMask.safetensors")
        }
        return try EchoMask(SafeTensors(contentsOf: url))
    }

    /// Tensors `input.*` (the input's scaling folded in), `gru.*` and `output.*`.
    public init(_ model: SafeTensors) throws {
        guard let shape = model.tensors["input.weight"]?.shape, shape.count == 2, (1...1024).contains(shape[0]),
              shape[1] == 3 * Self.bins else {
            throw ModelError.unusableTensor("input.weight")
        }
        hidden = shape[0]
        input = try DenseLayer(model, "input", rows: hidden, columns: 3 * Self.bins)
        recurrent = try GRULayer(model, "gru", inputs: hidden, size: hidden)
        output = try DenseLayer(model, "output", rows: Self.bins, columns: hidden)
        runBLASOnTheCallingThread()
    }

    /// Gains in 0…1 for the 81 bins from the powers of the microphone, the filter's output and
    /// its echo estimate (each as a 160-point frame at 16 kHz has them); advances `state` a frame.
    public func gains(microphone: UnsafePointer<Float>, output filtered: UnsafePointer<Float>, echo: UnsafePointer<Float>,
                      state: State, into gains: UnsafeMutablePointer<Float>) {
        let features = state.features.baseAddress!, bins = Self.bins
        Self.logPowers(microphone, into: features)
        Self.logPowers(filtered, into: features + bins)
        Self.logPowers(echo, into: features + 2 * bins)
        input.apply(features, into: state.layer.baseAddress!)
        for j in 0..<hidden { state.layer[j] = max(0, state.layer[j]) }
        let memory = state.hidden[0].baseAddress!
        recurrent.step(state.layer.baseAddress!, h: memory, gi: state.gi.baseAddress!, gh: state.gh.baseAddress!)
        output.apply(memory, into: gains)
        for k in 0..<bins { gains[k] = sigmoid(gains[k]) }
    }

    private static func logPowers(_ power: UnsafePointer<Float>, into features: UnsafeMutablePointer<Float>) {
        for k in 0..<bins { features[k] = logPower(power[k]) }
    }
}
