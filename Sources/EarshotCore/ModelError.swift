import Foundation

/// A model that cannot be used: the weights shipped with Earshot (the alert detector, the sound
/// matcher, the suppressor, the pause detector) or a file given in their place. `model` names it
/// as a person would ("the alert detector").
public enum ModelError: EarshotFailure, Equatable {
    case missing(model: String, file: String)
    case unreadable(path: String, reason: String)
    /// Not a safetensors file Earshot reads (`file`: its name; `problem`: what is wrong).
    case notSafetensors(file: String, problem: SafetensorsProblem)
    case noTensor(String)
    case tensorShape(String, shape: [Int], expected: [Int])
    /// A tensor that is missing or of no shape the network can take.
    case unusableTensor(String)
    /// A metadata value out of its range: `expected` says what it must be ("a number of frames
    /// from 8 to 500").
    case metadata(key: String, value: String, expected: String)
    case classes(found: String, expected: [String], backgrounds: [String])
    /// A per-class setting (`siren=0.9,…`) that cannot be read; `key` is the model's field it
    /// came from, nil where it was given on its own (a command-line option, a file).
    case perClass(key: String?, PerClassProblem)
    case notAnEmbedding(model: String)
    case noBank(model: String, size: Int)
    case layerInputs(model: String, layer: Int, takes: Int, expected: Int)
    case noSingleOutput(model: String)
    case noThreshold(model: String)
    case moreBinsThanFrame(bins: Int, frameSize: Int)

    public enum SafetensorsProblem: Equatable, Sendable {
        case shorterThanHeader, headerPastEnd, headerNotAnObject
        case tensorFields(String), notF32(String, dtype: String), byteRange(String)
    }

    public enum PerClassProblem: Equatable, Sendable {
        case notClassValue(item: String, classes: [String], values: String)
        case twice(String)
        /// A thresholds file that cannot be read, or is not an object of classes and numbers.
        case unreadableFile(path: String)
        case notAThresholdsObject(path: String)
    }

    public var description: String {
        switch self {
        case .missing(let model, let file): "\(model)'s weights (\(file)) are missing from this build"
        case .unreadable(let path, let reason): "cannot read the model \(path): \(reason)"
        case .notSafetensors(let file, let problem): "\(file) is not a usable safetensors file: \(problem)"
        case .noTensor(let name): "the model has no tensor \(name)"
        case .tensorShape(let name, let shape, let expected): "the model's \(name) has shape \(shape), not \(expected)"
        case .unusableTensor(let name): "the model has no usable tensor \(name)"
        case .metadata(let key, let value, let expected): "the model's \(key) '\(value)' is not \(expected)"
        case .classes(let found, let expected, let backgrounds):
            "the model's classes are \(found), not \(expected.joined(separator: ",")) and at most \(backgrounds.joined(separator: ", ")) after them"
        case .perClass(let key, let problem): (key.map { "the model's \($0): " } ?? "") + problem.description
        case .notAnEmbedding(let model): "\(model)'s model is a classifier, not an embedding"
        case .noBank(let model, let size): "\(model)'s model has no bank of \(size)-value embeddings"
        case .layerInputs(let model, let layer, let takes, let expected): "\(model)'s layer \(layer) takes \(takes) values, not \(expected)"
        case .noSingleOutput(let model): "\(model)'s model has no single output"
        case .noThreshold(let model): "\(model)'s model has no threshold between 0 and 1"
        case .moreBinsThanFrame(let bins, let frameSize): "the suppressor's network sets \(bins) bins; a \(frameSize)-point frame has fewer"
        }
    }
}

extension ModelError.SafetensorsProblem: CustomStringConvertible {
    public var description: String {
        switch self {
        case .shorterThanHeader: "shorter than its header length"
        case .headerPastEnd: "the header runs past the end"
        case .headerNotAnObject: "the header is not a JSON object"
        case .tensorFields(let key): "tensor \(key) lacks dtype, shape or data_offsets"
        case .notF32(let key, let dtype): "tensor \(key) is \(dtype); only F32 is read"
        case .byteRange(let key): "tensor \(key)'s byte range does not match its shape"
        }
    }
}

extension ModelError.PerClassProblem: CustomStringConvertible {
    public var description: String {
        switch self {
        case .notClassValue(let item, let classes, let values):
            "'\(item)' is not CLASS=VALUE with a class of \(classes.joined(separator: ", ")) and \(values)"
        case .twice(let name): "\(name) is given twice"
        case .unreadableFile(let path): "cannot read the thresholds file \(path)"
        case .notAThresholdsObject(let path): "\(path) is not a JSON object of class names and numeric thresholds"
        }
    }
}
