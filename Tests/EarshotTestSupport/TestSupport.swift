import EarshotCore
import Foundation

// Helpers every test target shares: seeded signals, reference maths, scratch folders.

/// Uniform noise in ±amplitude, reproducible from its seed.
public func noise(count: Int, seed: UInt64, amplitude: Float = 0.5) -> [Float] {
    var rng = SeededRandom(seed: seed)
    return (0..<count).map { _ in Float.random(in: -amplitude...amplitude, using: &rng) }
}

public func sine(frequencyHz: Double, sampleRate: Double, count: Int, amplitude: Double = 1) -> [Float] {
    (0..<count).map { Float(amplitude * sin(2 * .pi * frequencyHz * Double($0) / sampleRate)) }
}

public func rms(_ x: ArraySlice<Float>) -> Double {
    (x.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(max(1, x.count))).squareRoot()
}

/// Textbook convolution in Double: the independent reference for every fast one.
public func directConvolution(_ x: [Double], _ h: [Double]) -> [Double] {
    var y = [Double](repeating: 0, count: x.count + h.count - 1)
    for (j, hj) in h.enumerated() where hj != 0 { for (i, xi) in x.enumerated() { y[i + j] += xi * hj } }
    return y
}

public func directConvolution(_ x: [Float], _ h: [Float]) -> [Double] {
    directConvolution(x.map(Double.init), h.map(Double.init))
}

/// ‖a − b‖ / ‖b‖ over b's length.
public func relativeError(_ a: [Float], _ b: [Double]) -> Double {
    var error = 0.0, energy = 0.0
    for i in b.indices {
        error += (Double(a[i]) - b[i]) * (Double(a[i]) - b[i])
        energy += b[i] * b[i]
    }
    return (error / energy).squareRoot()
}

/// A fresh empty folder, removed when `body` returns.
public func withTemporaryDirectory<T>(_ body: (URL) throws -> T) throws -> T {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("earshot-test-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: url) }
    return try body(url)
}

public func withTemporaryDirectoryAsync<T>(_ body: (URL) async throws -> T) async throws -> T {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("earshot-test-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: url) }
    return try await body(url)
}

/// The first of `names` that is an executable in the usual places; nil if none is installed.
public func installedExecutable(_ name: String) -> String? {
    ["/usr/bin", "/usr/sbin", "/usr/local/bin", "/usr/local/sbin", "/opt/homebrew/bin", "/opt/homebrew/sbin"]
        .map { "\($0)/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
}

public func contents(of directory: URL) throws -> [String] {
    try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
}

/// A 32-bit float WAV written byte by byte, for contents libsndfile would refuse to write
/// (NaN, absurd rates, no frames at all).
public func writeFloatWAV(_ samples: [Float], sampleRate: Int = 16_000, channels: Int = 1, to url: URL) throws {
    var data = Data()
    func u32(_ v: UInt32) { withUnsafeBytes(of: v.littleEndian) { data.append(contentsOf: $0) } }
    func u16(_ v: UInt16) { withUnsafeBytes(of: v.littleEndian) { data.append(contentsOf: $0) } }
    let payload = samples.count * 4
    data.append(contentsOf: Array("RIFF".utf8)); u32(UInt32(36 + payload))
    data.append(contentsOf: Array("WAVEfmt ".utf8))
    u32(16); u16(3); u16(UInt16(channels)); u32(UInt32(sampleRate)); u32(UInt32(sampleRate * channels * 4))
    u16(UInt16(channels * 4)); u16(32)
    data.append(contentsOf: Array("data".utf8)); u32(UInt32(payload))
    for s in samples { u32(s.bitPattern) }
    try data.write(to: url)
}

/// A safetensors model from its JSON header and its tensors' bytes: the header's length first,
/// as the format has it, so a test can build or rewrite a model file in memory.
public func safeTensors(header: [String: Any], body: Data) throws -> SafeTensors {
    let json = try JSONSerialization.data(withJSONObject: header)
    let length = withUnsafeBytes(of: UInt64(json.count).littleEndian) { Data($0) }
    return try SafeTensors(data: length + json + body)
}

/// The signal `training/train.py` and `training/train_sounds.py` compute their parity outputs
/// from, computed here the same way.
public func paritySignal(count: Int) -> [Float] {
    (0..<count).map { n in
        let t = Double(n) / 16_000
        let hashed = (Int64(n) &* 1_103_515_245 &+ 12_345) % 2_147_483_648
        let noise = Double(hashed) / 2_147_483_648 - 0.5
        let keyed = t.truncatingRemainder(dividingBy: 4) < 2.5 && t.truncatingRemainder(dividingBy: 1) < 0.5
        let phase = 2 * Double.pi * (1000 * t - 400 / (2 * Double.pi * 0.25) * cos(2 * Double.pi * 0.25 * t))
        return Float(0.3 * sin(2 * Double.pi * 3100 * t) * (keyed ? 1 : 0) + 0.1 * sin(phase) * (t > 1.5 ? 1 : 0) + 0.05 * noise)
    }
}

/// Runs of three or more samples at one value at or above `level`: what a clip (or a guard
/// pinning samples at its ceiling) leaves, and natural sound never has.
public func flatRuns(_ x: [Float], above level: Float) -> Int {
    var runs = 0, length = 1
    for i in x.indices.dropFirst() {
        length = abs(x[i]) >= level && x[i] == x[i - 1] ? length + 1 : 1
        if length == 3 { runs += 1 }
    }
    return runs
}
