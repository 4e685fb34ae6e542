import EarshotCore
import Foundation

/// Reads the `safetensors` format: an 8-byte little-endian header length, a JSON header naming
/// each tensor's dtype, shape and byte range, then the raw little-endian data. Only float32
/// tensors are read; anything malformed is refused with the reason.
public struct SafeTensors: Sendable {
    public struct Tensor: Sendable {
        public var shape: [Int]
        public var values: [Float]
    }

    public private(set) var tensors: [String: Tensor] = [:]
    /// The `__metadata__` strings.
    public private(set) var metadata: [String: String] = [:]

    public init(contentsOf url: URL) throws {
        let data: Data
        do { data = try Data(contentsOf: url) } catch {
            throw ModelError.unreadable(path: url.path, reason: error.localizedDescription)
        }
        try self.init(data: data, name: url.lastPathComponent)
    }

    public init(data: Data, name: String = "model") throws {
        func bad(_ problem: ModelError.SafetensorsProblem) -> ModelError { .notSafetensors(file: name, problem: problem) }
        guard data.count >= 8 else { throw bad(.shorterThanHeader) }
        let headerLength = data.prefix(8).enumerated().reduce(UInt64(0)) { $0 | UInt64($1.element) << (8 * UInt64($1.offset)) }
        guard headerLength <= UInt64(data.count - 8) else { throw bad(.headerPastEnd) }
        let body = data.startIndex + 8 + Int(headerLength)
        guard let header = try? JSONSerialization.jsonObject(with: data[(data.startIndex + 8)..<body]) as? [String: Any] else {
            throw bad(.headerNotAnObject)
        }
        let bytes = data.count - 8 - Int(headerLength)
        for (key, value) in header {
            if key == "__metadata__" {
                metadata = (value as? [String: String]) ?? [:]
                continue
            }
            guard let entry = value as? [String: Any], let dtype = entry["dtype"] as? String,
                  let shape = entry["shape"] as? [Int], let offsets = entry["data_offsets"] as? [Int], offsets.count == 2 else {
                throw bad(.tensorFields(key))
            }
            guard dtype == "F32" else { throw bad(.notF32(key, dtype: dtype)) }
            // Counted with overflow checks: a hostile shape must not trap.
            let count = shape.reduce(Optional(1)) { total, size in
                guard let total, size >= 0 else { return nil }
                let (product, overflow) = total.multipliedReportingOverflow(by: size)
                return overflow || product > bytes ? nil : product
            }
            guard let count, offsets[0] >= 0, offsets[0] <= offsets[1], offsets[1] <= bytes, offsets[1] - offsets[0] == 4 * count else {
                throw bad(.byteRange(key))
            }
            var values = [Float](repeating: 0, count: count)
            values.withUnsafeMutableBytes { target in
                data.copyBytes(to: target, from: (body + offsets[0])..<(body + offsets[1]))
            }
            // The format is little-endian; so is every machine Earshot runs on, but say so.
            if UInt32(1).bigEndian == 1 { values = values.map { Float(bitPattern: $0.bitPattern.byteSwapped) } }
            tensors[key] = Tensor(shape: shape, values: values)
        }
    }

    /// The tensor called `name`, which must have `shape`.
    public func tensor(_ name: String, shape: [Int]) throws -> [Float] {
        guard let tensor = tensors[name] else { throw ModelError.noTensor(name) }
        guard tensor.shape == shape else {
            throw ModelError.tensorShape(name, shape: tensor.shape, expected: shape)
        }
        return tensor.values
    }
}
