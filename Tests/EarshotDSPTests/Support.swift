import EarshotCore
import Testing
import EarshotTestSupport
import Foundation

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

