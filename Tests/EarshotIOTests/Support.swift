import EarshotCore
import Foundation
import Testing

func noise(count: Int, seed: UInt64, amplitude: Float = 0.5) -> [Float] {
    var rng = SeededRandom(seed: seed)
    return (0..<count).map { _ in Float.random(in: -amplitude...amplitude, using: &rng) }
}

func sine(frequencyHz: Double, sampleRate: Double, count: Int, amplitude: Double = 0.5) -> [Float] {
    (0..<count).map { Float(amplitude * sin(2 * .pi * frequencyHz * Double($0) / sampleRate)) }
}

/// A fresh empty directory, removed when the test's closure returns.
func withTemporaryDirectory<T>(_ body: (URL) throws -> T) throws -> T {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("earshot-io-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: url) }
    return try body(url)
}

func directoryContents(_ url: URL) throws -> [String] {
    try FileManager.default.contentsOfDirectory(atPath: url.path).sorted()
}

/// Writes a float WAV by hand (44-byte header), for inputs libsndfile would refuse to write.
func writeFloatWAV(_ samples: [Float], sampleRate: Int, channels: Int, to url: URL) throws {
    var data = Data()
    func u32(_ v: UInt32) { withUnsafeBytes(of: v.littleEndian) { data.append(contentsOf: $0) } }
    func u16(_ v: UInt16) { withUnsafeBytes(of: v.littleEndian) { data.append(contentsOf: $0) } }
    let payload = samples.count * 4
    data.append(contentsOf: Array("RIFF".utf8)); u32(UInt32(36 + payload))
    data.append(contentsOf: Array("WAVE".utf8)); data.append(contentsOf: Array("fmt ".utf8))
    u32(16); u16(3); u16(UInt16(channels)); u32(UInt32(sampleRate)); u32(UInt32(sampleRate * channels * 4))
    u16(UInt16(channels * 4)); u16(32)
    data.append(contentsOf: Array("data".utf8)); u32(UInt32(payload))
    for s in samples { u32(s.bitPattern) }
    try data.write(to: url)
}
