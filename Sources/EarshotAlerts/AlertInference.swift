import COpenBLAS
import Foundation

/// One pass of an `AlertNetwork` over an input, worked through in steps small enough that no
/// audio block has to carry a whole classification: each convolution is cut into bands of
/// output rows of about `stepMultiplies` multiply-adds (its im2col, GEMM, bias and ReLU for
/// those rows), then its pooling, then the head. The steps are fixed when the inference is
/// made, from the network's shape; every buffer is allocated then too, so `step` does not
/// allocate.
public final class AlertInference {
    /// Roughly how much work one step does: about 0.1 ms on one core here, a tenth of a
    /// 64-frame block at 48 kHz (the whole shipped network is some 13 million).
    public static let stepMultiplies = 2_000_000

    private enum Step {
        case convolve(layer: Int, rows: Range<Int>)
        case pool(layer: Int)
        case head
    }

    private let layers: [AlertNetwork.Layer]
    private let headWeights: [Float], headBias: [Float]
    private let outputs: Int
    private let embedding: Bool
    private let steps: [Step]
    private var next: Int
    /// The input: 2 × windowFrames × melCount values, written before `start`.
    public let input: UnsafeMutablePointer<Float>
    private let inputCount: Int
    private let columns: UnsafeMutablePointer<Float>
    private let activations: UnsafeMutablePointer<Float>
    private let pooled: UnsafeMutablePointer<Float>
    private let pooledFeatures: UnsafeMutablePointer<Float>
    private let logits: UnsafeMutablePointer<Float>  // each output's logit, then its softmax share (or the embedding)

    public init(network: AlertNetwork) {
        layers = network.layers
        headWeights = network.headWeights
        headBias = network.headBias
        outputs = network.outputs
        embedding = network.embedding
        var steps: [Step] = []
        for (index, layer) in layers.enumerated() {
            let perRow = layer.outputChannels * layer.inputChannels * 9 * layer.width
            let rows = max(1, Self.stepMultiplies / max(1, perRow))
            for first in stride(from: 0, to: layer.height, by: rows) {
                steps.append(.convolve(layer: index, rows: first..<min(layer.height, first + rows)))
            }
            if index < AlertNetwork.pooledLayers { steps.append(.pool(layer: index)) }
        }
        steps.append(.head)
        self.steps = steps
        next = steps.count
        inputCount = network.inputCount
        input = .allocate(capacity: inputCount)
        input.initialize(repeating: 0, count: inputCount)
        columns = .allocate(capacity: network.largestColumns)
        columns.initialize(repeating: 0, count: network.largestColumns)
        activations = .allocate(capacity: network.largestActivations)
        activations.initialize(repeating: 0, count: network.largestActivations)
        pooled = .allocate(capacity: network.largestActivations)
        pooled.initialize(repeating: 0, count: network.largestActivations)
        let last = layers.last!.outputChannels
        pooledFeatures = .allocate(capacity: 2 * last)
        pooledFeatures.initialize(repeating: 0, count: 2 * last)
        logits = .allocate(capacity: outputs)
        logits.initialize(repeating: 0, count: outputs)
    }

    deinit {
        input.deallocate()
        columns.deallocate()
        activations.deallocate()
        pooled.deallocate()
        pooledFeatures.deallocate()
        logits.deallocate()
    }

    /// Steps in one classification.
    public var stepCount: Int { steps.count }

    /// Whether a classification has started and not finished.
    public var isRunning: Bool { next < steps.count }

    /// Begins a classification of what `input` holds now.
    public func start() { next = 0 }

    /// Does the next step; true once the probabilities are ready.
    @discardableResult
    public func step() -> Bool {
        guard next < steps.count else { return true }
        switch steps[next] {
        case .convolve(let index, let rows):
            let source = index == 0 ? input : pooled
            convolve(layers[index], input: source, rows: rows)
        case .pool(let index):
            let layer = layers[index]
            pool(activations, channels: layer.outputChannels, height: layer.height, width: layer.width, into: pooled)
        case .head:
            head()
        }
        next += 1
        return next == steps.count
    }

    /// Does every step left.
    public func finish() {
        while !step() {}
    }

    /// The class probabilities of the finished classification (`AlertNetwork.classes.count`
    /// values; the kinds of background count as background).
    public func probabilities(into probabilities: UnsafeMutablePointer<Float>) {
        let classes = AlertNetwork.classes.count
        for k in 0..<classes { probabilities[k] = logits[k] }
        for k in classes..<outputs { probabilities[0] += logits[k] }
    }

    /// The embedding of the finished pass (an embedding network's `outputCount` values, of
    /// unit length).
    public func embedding(into values: UnsafeMutablePointer<Float>) {
        for k in 0..<outputs { values[k] = logits[k] }
    }

    /// Global max and mean over the last feature maps, the linear layer and the softmax (or,
    /// for an embedding, the normalisation to unit length).
    private func head() {
        let last = layers.last!
        let area = last.height * last.width
        for c in 0..<last.outputChannels {
            var largest = -Float.infinity, sum: Float = 0
            for i in 0..<area {
                let v = activations[c * area + i]
                largest = max(largest, v)
                sum += v
            }
            pooledFeatures[c] = largest
            pooledFeatures[last.outputChannels + c] = sum / Float(area)
        }
        let width = 2 * last.outputChannels
        var largest = -Float.infinity
        for k in 0..<outputs {
            var logit = headBias[k]
            for i in 0..<width { logit += headWeights[k * width + i] * pooledFeatures[i] }
            logits[k] = logit
            largest = max(largest, logit)
        }
        if embedding {
            var squares: Float = 0
            for k in 0..<outputs { squares += logits[k] * logits[k] }
            let scale = 1 / max(sqrtf(squares), 1e-12)
            for k in 0..<outputs { logits[k] *= scale }
            return
        }
        var total: Float = 0
        for k in 0..<outputs {
            logits[k] = expf(logits[k] - largest)
            total += logits[k]
        }
        for k in 0..<outputs { logits[k] /= total }
    }

    /// 3×3 convolution with zero padding, bias and ReLU, of output rows `rows`, into
    /// `activations`.
    private func convolve(_ layer: AlertNetwork.Layer, input: UnsafeMutablePointer<Float>, rows: Range<Int>) {
        let (h, w) = (layer.height, layer.width)
        let area = h * w
        // im2col for these rows: row (c, dy, dx) holds the input shifted by (dy − 1, dx − 1).
        for c in 0..<layer.inputChannels {
            for dy in 0..<3 {
                for dx in 0..<3 {
                    let row = columns + ((c * 3 + dy) * 3 + dx) * area
                    for y in rows {
                        let sy = y + dy - 1
                        let out = row + y * w
                        guard sy >= 0 && sy < h else {
                            out.update(repeating: 0, count: w)
                            continue
                        }
                        let inRow = input + c * area + sy * w
                        for x in 0..<w {
                            let sx = x + dx - 1
                            out[x] = sx >= 0 && sx < w ? inRow[sx] : 0
                        }
                    }
                }
            }
        }
        let first = rows.lowerBound * w, count = rows.count * w
        layer.weights.withUnsafeBufferPointer { weights in
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans,
                        Int32(layer.outputChannels), Int32(count), Int32(layer.inputChannels * 9),
                        1, weights.baseAddress, Int32(layer.inputChannels * 9), columns + first, Int32(area),
                        0, activations + first, Int32(area))
        }
        for c in 0..<layer.outputChannels {
            let bias = layer.bias[c]
            let map = activations + c * area + first
            for i in 0..<count { map[i] = max(0, map[i] + bias) }
        }
    }

    /// 2×2 max pooling, odd edges dropped (as PyTorch's max_pool2d).
    private func pool(_ input: UnsafeMutablePointer<Float>, channels: Int, height: Int, width: Int, into output: UnsafeMutablePointer<Float>) {
        let (oh, ow) = (height / 2, width / 2)
        for c in 0..<channels {
            let source = input + c * height * width, target = output + c * oh * ow
            for y in 0..<oh {
                for x in 0..<ow {
                    let a = source[(2 * y) * width + 2 * x], b = source[(2 * y) * width + 2 * x + 1]
                    let d = source[(2 * y + 1) * width + 2 * x], e = source[(2 * y + 1) * width + 2 * x + 1]
                    target[y * ow + x] = max(max(a, b), max(d, e))
                }
            }
        }
    }
}
