import COpenBLAS
import EarshotCore
import Foundation

/// A fully connected layer, y = W x + b, on OpenBLAS: the building block of the suppressor's and
/// the echo mask's networks. Neither layer allocates when applied.
package struct DenseLayer: Sendable {
    let weights: [Float]  // rows × columns, row-major
    let bias: [Float]
    package let rows: Int, columns: Int

    init(weights: [Float], bias: [Float], rows: Int, columns: Int) {
        self.weights = weights
        self.bias = bias
        self.rows = rows
        self.columns = columns
    }

    package init(_ model: SafeTensors, _ name: String, rows: Int, columns: Int) throws {
        self.init(weights: try model.tensor("\(name).weight", shape: [rows, columns]),
                  bias: try model.tensor("\(name).bias", shape: [rows]), rows: rows, columns: columns)
    }

    /// y = W x + b
    package func apply(_ x: UnsafePointer<Float>, into y: UnsafeMutablePointer<Float>) {
        y.update(from: bias, count: rows)
        weights.withUnsafeBufferPointer { w in
            cblas_sgemv(CblasRowMajor, CblasNoTrans, Int32(rows), Int32(columns), 1, w.baseAddress, Int32(columns), x, 1, 1, y, 1)
        }
    }
}

/// PyTorch's GRU, one layer: gates r, z, n in that order; n = tanh(Wᵢₙx + bᵢₙ + r ⊙ (Wₕₙh + bₕₙ)).
/// Tensors `name.weight_ih`, `name.weight_hh`, `name.bias_ih`, `name.bias_hh`.
package struct GRULayer: Sendable {
    let input: DenseLayer
    let recurrent: DenseLayer
    package let size: Int

    package init(_ model: SafeTensors, _ name: String, inputs: Int, size: Int) throws {
        func dense(_ part: String) throws -> DenseLayer {
            DenseLayer(weights: try model.tensor("\(name).weight_\(part)", shape: [3 * size, part == "ih" ? inputs : size]),
                       bias: try model.tensor("\(name).bias_\(part)", shape: [3 * size]), rows: 3 * size, columns: part == "ih" ? inputs : size)
        }
        input = try dense("ih")
        recurrent = try dense("hh")
        self.size = size
    }

    /// Advances `h` by one step on `x`; `gi` and `gh` are 3·size scratch.
    package func step(_ x: UnsafePointer<Float>, h: UnsafeMutablePointer<Float>, gi: UnsafeMutablePointer<Float>, gh: UnsafeMutablePointer<Float>) {
        input.apply(x, into: gi)
        recurrent.apply(h, into: gh)
        for j in 0..<size {
            let r = sigmoid(gi[j] + gh[j])
            let z = sigmoid(gi[size + j] + gh[size + j])
            let n = tanhf(gi[2 * size + j] + r * gh[2 * size + j])
            h[j] = (1 - z) * n + z * h[j]
        }
    }
}

/// A recurrent network's memory and scratch for one stream, allocated once: `hidden` (one
/// vector per GRU layer), the frame's `features`, a `layer` between, and the GRU's gate scratch.
public final class RecurrentState {
    package let hidden: [UnsafeMutableBufferPointer<Float>]
    package let features: UnsafeMutableBufferPointer<Float>
    package let layer: UnsafeMutableBufferPointer<Float>
    package let gi: UnsafeMutableBufferPointer<Float>
    package let gh: UnsafeMutableBufferPointer<Float>

    package init(features count: Int, hidden size: Int, layers: Int) {
        hidden = (0..<layers).map { _ in .allocate(capacity: size) }
        features = .allocate(capacity: count)
        layer = .allocate(capacity: size)
        gi = .allocate(capacity: 3 * size)
        gh = .allocate(capacity: 3 * size)
        reset()
    }

    deinit {
        for h in hidden { h.deallocate() }
        features.deallocate()
        layer.deallocate()
        gi.deallocate()
        gh.deallocate()
    }

    public func reset() {
        for h in hidden { h.update(repeating: 0) }
    }

    /// Takes over another state's memory (the same network's).
    public func copy(from other: RecurrentState) {
        for (mine, theirs) in zip(hidden, other.hidden) { _ = mine.update(fromContentsOf: theirs) }
    }
}

/// A power as a network's feature: its log, with NaN and infinity read as silence (either would
/// stay in the recurrent state for good).
@inline(__always)
package func logPower(_ power: Float) -> Float { log10f((power.isFinite ? power : 0) + 1e-10) }

/// Networks run on the audio thread: OpenBLAS's own worker threads would only wait on it (and,
/// on a loaded machine, stall it for milliseconds). Called where a network is loaded.
package func runBLASOnTheCallingThread() { openblas_set_num_threads(1) }

@inline(__always)
package func sigmoid(_ x: Float) -> Float { 1 / (1 + expf(-x)) }
