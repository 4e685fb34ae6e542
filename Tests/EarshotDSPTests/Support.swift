import EarshotCore
import Testing
import Foundation

/// A small seeded generator (SplitMix64) so every test signal is reproducible.
struct SeededRandom: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

func noise(count: Int, seed: UInt64, amplitude: Float = 0.5) -> [Float] {
    var rng = SeededRandom(seed: seed)
    return (0..<count).map { _ in Float.random(in: -amplitude...amplitude, using: &rng) }
}

func sine(frequencyHz: Double, sampleRate: Double, count: Int, amplitude: Double = 1) -> [Float] {
    (0..<count).map { Float(amplitude * sin(2 * .pi * frequencyHz * Double($0) / sampleRate)) }
}

func fixture<T: Decodable>(_ name: String, as type: T.Type) throws -> T {
    let url = try #require(Bundle.module.url(forResource: name, withExtension: "json", subdirectory: "Fixtures"))
    return try JSONDecoder().decode(T.self, from: Data(contentsOf: url))
}

/// Runs `processor` over `signal` (mono) in consecutive blocks of the given sizes (cycled).
func run<P: AudioProcessor>(_ processor: inout P, over signal: [Float], blockSizes: [Int], sampleRate: Double = 16_000) throws -> [Float] {
    let buffer = AudioBuffer(channels: [signal])
    try processor.prepare(ProcessSpec(sampleRate: sampleRate, maximumBlockFrames: blockSizes.max()!, channelCount: 1))
    var position = 0, index = 0
    while position < signal.count {
        let count = min(blockSizes[index % blockSizes.count], signal.count - position)
        var block = buffer.block().frames(from: position, count: count)
        processor.process(&block)
        position += count
        index += 1
    }
    return Array(buffer.channel(0))
}

func rms(_ x: ArraySlice<Float>) -> Double {
    (x.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(max(1, x.count))).squareRoot()
}
