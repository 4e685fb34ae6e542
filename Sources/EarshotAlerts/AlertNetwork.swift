import COpenBLAS
import EarshotCore
import Foundation

/// The alert classifier: four 3×3 convolutions (batch norm folded in, ReLU, 2×2 max pooling
/// after the first three), global max and mean pooling, one linear layer, softmax (its
/// temperature folded into the last layer, so probabilities are calibrated). Trained by
/// `training/train.py`; weights in `Resources/AlertDetector.safetensors`, whose shapes give the
/// layers' widths and whose metadata carries the default operating point.
///
/// Each convolution is one OpenBLAS SGEMM over an im2col matrix; every buffer is allocated
/// at load time, so `classify` does not allocate.
public final class AlertNetwork {
    public static let classes = ["background", "siren", "smoke_alarm", "car_horn", "doorbell"]
    /// Outputs a model may have after the classes: kinds of background it tells apart
    /// (background with music in it), heard as background.
    static let backgroundKinds = ["music"]
    static let convolutionCount = 4
    static let pooledLayers = 3

    struct Layer {
        var inputChannels: Int, outputChannels: Int, height: Int, width: Int
        var weights: [Float]  // outputChannels × (inputChannels · 9), row-major
        var bias: [Float]
    }

    let layers: [Layer]
    let headWeights: [Float]  // outputs × (2 · last channels)
    let headBias: [Float]
    let outputs: Int  // the classes, and the kinds of background after them; or the embedding's size
    /// Whether the head gives an embedding (normalised to unit length) instead of class
    /// probabilities.
    public let embedding: Bool
    /// The on-threshold per class the network was tuned for (metadata `thresholds`,
    /// `siren=0.9,smoke_alarm=0.8,…`); classes it does not name keep the tracker's default.
    public let defaultThresholds: [AlertClass: Float]
    /// The tracker at that operating point: those thresholds, the decisions it averages
    /// (metadata `smoothing`, and `class_smoothing`, `siren=1`, for the classes averaged
    /// otherwise), how long a class must hold before it is announced (metadata
    /// `minimum`, seconds) and the probability announced at once (metadata `sure`), chosen with
    /// the thresholds, and the sustained route (metadata `sustained`, `siren=0.8`, averaged over
    /// `sustained_decisions`); the tracker's defaults where absent.
    public let defaultSettings: AlertEventTracker.Settings
    /// Frames of features one input holds (metadata `window`; 50, one second, where absent).
    public let windowFrames: Int
    /// The most any layer needs for its im2col matrix and for its activations.
    let largestColumns: Int, largestActivations: Int
    /// What `classify` works with; a detector has an inference of its own.
    private var inference: AlertInference!

    /// The network shipped with Earshot.
    public static func bundled() throws -> AlertNetwork {
        guard let url = Bundle.module.url(forResource: "AlertDetector", withExtension: "safetensors") else {
            throw ModelError.missing(model: "the alert detector", file: "AlertDetector.safetensors")
        }
        return try AlertNetwork(SafeTensors(contentsOf: url))
    }

    public init(_ model: SafeTensors) throws {
        var outputs = Self.classes.count
        embedding = model.metadata["embedding"] != nil
        if let text = model.metadata["embedding"] {
            // The same network mapping a window to a point on the unit sphere (`SoundEmbedding`).
            guard let size = Int(text), (2...1024).contains(size) else {
                throw ModelError.metadata(key: "embedding", value: text, expected: "a size from 2 to 1024")
            }
            outputs = size
        } else if let classes = model.metadata["classes"] {
            let names = classes.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            let kinds = names.dropFirst(Self.classes.count)
            guard Array(names.prefix(Self.classes.count)) == Self.classes, kinds.allSatisfy(Self.backgroundKinds.contains),
                  Set(kinds).count == kinds.count else {
                throw ModelError.classes(found: classes, expected: Self.classes, backgrounds: Self.backgroundKinds)
            }
            outputs = names.count
        }
        self.outputs = outputs
        var window = AlertFeatures.defaultWindowFrames
        if let text = model.metadata["window"] {
            // At least 8 frames, so the three poolings leave a row; at most 10 s of context.
            guard let frames = Int(text), (8...500).contains(frames) else {
                throw ModelError.metadata(key: "window", value: text, expected: "a number of frames from 8 to 500")
            }
            window = frames
        }
        windowFrames = window
        var layers: [Layer] = []
        var height = window, width = AlertFeatures.melCount
        var mostColumns = 0, mostActivations = 0
        var cin = 2  // log-mel and tonality
        for i in 0..<Self.convolutionCount {
            guard let shape = model.tensors["conv\(i).weight"]?.shape, shape.count == 4, (1...1024).contains(shape[0]) else {
                throw ModelError.unusableTensor("conv\(i).weight")
            }
            let cout = shape[0]
            defer { cin = cout }
            layers.append(Layer(
                inputChannels: cin, outputChannels: cout, height: height, width: width,
                weights: try model.tensor("conv\(i).weight", shape: [cout, cin, 3, 3]),
                bias: try model.tensor("conv\(i).bias", shape: [cout])))
            mostColumns = max(mostColumns, cin * 9 * height * width)
            mostActivations = max(mostActivations, cout * height * width)
            if i < Self.pooledLayers { height /= 2; width /= 2 }
        }
        let last = cin
        headWeights = try model.tensor("head.weight", shape: [outputs, 2 * last])
        headBias = try model.tensor("head.bias", shape: [outputs])
        self.layers = layers
        defaultThresholds = try Self.field("thresholds", of: model, Self.thresholds)
        var settings = AlertEventTracker.Settings(thresholds: defaultThresholds)
        if let text = model.metadata["smoothing"] {
            guard let smoothing = Int(text), (1...10).contains(smoothing) else {
                throw ModelError.metadata(key: "smoothing", value: text, expected: "a number of decisions from 1 to 10")
            }
            settings.smoothing = smoothing
        }
        for (alertClass, depth) in try Self.field("class_smoothing", of: model, Self.classSmoothing) {
            settings.classSmoothing[AlertClass.allCases.firstIndex(of: alertClass)!] = depth
        }
        if let text = model.metadata["minimum"] {
            guard let minimum = Double(text), (0...2).contains(minimum) else {
                throw ModelError.metadata(key: "minimum", value: text, expected: "a number of seconds from 0 to 2")
            }
            settings.minimumSeconds = minimum
        }
        if let text = model.metadata["sure"] {
            guard let sure = Float(text), sure > 0, sure <= 1 else {
                throw ModelError.metadata(key: "sure threshold", value: text, expected: "a probability from 0 to 1")
            }
            settings.sureThreshold = sure
        }
        if let text = model.metadata["sustained_decisions"] {
            guard let decisions = Int(text), (2...100).contains(decisions) else {
                throw ModelError.metadata(key: "sustained_decisions", value: text, expected: "a number of decisions from 2 to 100")
            }
            settings.sustainedDecisions = decisions
        }
        for (alertClass, threshold) in try Self.field("sustained", of: model, Self.thresholds) {
            settings.sustainedThresholds[AlertClass.allCases.firstIndex(of: alertClass)!] = threshold
        }
        defaultSettings = settings
        largestColumns = mostColumns
        largestActivations = mostActivations
        // One thread: the detector runs beside the audio, not across every core.
        openblas_set_num_threads(1)
        inference = AlertInference(network: self)
    }

    /// Parses `siren=0.9,smoke_alarm=0.8`: each class at most once, each value in (0, 1).
    public static func thresholds(_ text: String) throws -> [AlertClass: Float] {
        try perClass(text, values: "a value between 0 and 1") { Float($0).flatMap { $0 > 0 && $0 < 1 ? $0 : nil } }
    }

    /// The tracker's settings: this network's operating point, moved by the thresholds (the
    /// probability each class must reach) in a JSON file `{"siren":0.9,…}`, then by
    /// sensitivities (`CLASS=S`, one minus the probability), the later winning.
    public func settings(thresholdsFile: String?, sensitivities: [String]) throws -> AlertEventTracker.Settings {
        var chosen: [AlertClass: Float] = [:]
        if let path = thresholdsFile {
            guard let data = FileManager.default.contents(atPath: path) else { throw ModelError.perClass(key: nil, .unreadableFile(path: path)) }
            guard let object = try? JSONDecoder().decode([String: Float].self, from: data) else {
                throw ModelError.perClass(key: nil, .notAThresholdsObject(path: path))
            }
            chosen = try Self.thresholds(object.map { "\($0.key)=\($0.value)" }.joined(separator: ","))
        }
        chosen.merge(try Self.thresholds(sensitivities.joined(separator: ",")).mapValues { 1 - $0 }) { $1 }
        var settings = defaultSettings
        for (alertClass, threshold) in chosen { settings.move(alertClass, to: threshold) }
        return settings
    }

    /// Parses `siren=1`: each class at most once, each a number of decisions from 1 to 10.
    static func classSmoothing(_ text: String) throws -> [AlertClass: Int] {
        try perClass(text, values: "1 to 10 decisions") { Int($0).flatMap { (1...10).contains($0) ? $0 : nil } }
    }

    /// A per-class metadata field of the model (absent: none given), its error naming the field.
    private static func field<Value>(_ key: String, of model: SafeTensors, _ parse: (String) throws -> Value) throws -> Value {
        do {
            return try parse(model.metadata[key] ?? "")
        } catch ModelError.perClass(nil, let problem) {
            throw ModelError.perClass(key: key, problem)
        }
    }

    /// `CLASS=VALUE,…`, each class at most once; `value` reads one value, nil where it is not one.
    private static func perClass<Value>(_ text: String, values: String, value: (String) -> Value?) throws -> [AlertClass: Value] {
        var out: [AlertClass: Value] = [:]
        for item in text.split(separator: ",") where !item.isEmpty {
            let parts = item.split(separator: "=", omittingEmptySubsequences: false)
            guard parts.count == 2, let alertClass = AlertClass(rawValue: String(parts[0]).trimmingCharacters(in: .whitespaces)),
                  let parsed = value(String(parts[1]).trimmingCharacters(in: .whitespaces)) else {
                throw ModelError.perClass(key: nil, .notClassValue(item: String(item), classes: AlertClass.allCases.map(\.rawValue), values: values))
            }
            guard out.updateValue(parsed, forKey: alertClass) == nil else {
                throw ModelError.perClass(key: nil, .twice(alertClass.rawValue))
            }
        }
        return out
    }

    /// Class probabilities for one input of 2 × `windowFrames` × `AlertFeatures.melCount` values
    /// ([channel][frame][band]) into `probabilities` (`classes.count` values), all at once.
    public func classify(_ input: UnsafePointer<Float>, probabilities: UnsafeMutablePointer<Float>) {
        inference.input.update(from: input, count: inputCount)
        inference.start()
        inference.finish()
        inference.probabilities(into: probabilities)
    }

    /// Values per input: 2 × `windowFrames` × `AlertFeatures.melCount`.
    public var inputCount: Int { 2 * windowFrames * AlertFeatures.melCount }

    /// The embedding's size (an embedding network) or the outputs' count.
    public var outputCount: Int { outputs }
}
