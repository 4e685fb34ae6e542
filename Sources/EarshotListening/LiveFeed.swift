import EarshotDSP
import EarshotHub
import EarshotHubClient
import EarshotIO

/// What the microphone hears, to the hub's live view: a tap in the audio path, read and
/// analysed off the audio thread (`pump`, called every few tens of milliseconds), sent as
/// `LiveFrame`s.
public final class LiveFeed {
    public let tap: LiveTap
    private let analyzer: LevelSpectrumAnalyzer
    private let publisher: LivePublisher
    private var scratch: [Float]
    private var sequence: UInt32 = 0

    public init(address: HubAddress, sampleRate: Double) {
        tap = LiveTap(sampleRate: sampleRate)
        analyzer = LevelSpectrumAnalyzer(sampleRate: sampleRate)
        publisher = LivePublisher(address: address)
        scratch = [Float](repeating: 0, count: tap.ring.capacity)
    }

    /// Analyses what the tap holds and sends a frame for every 50 ms of it.
    public func pump(alerting: Bool) {
        let count = scratch.withUnsafeMutableBufferPointer { tap.ring.read(into: $0) }
        let readings = scratch.withUnsafeBufferPointer { analyzer.push(UnsafeBufferPointer(rebasing: $0[..<count])) }
        for reading in readings {
            sequence &+= 1
            publisher.send(LiveFrame(
                alerting: alerting, lowHz: Int(reading.lowHz), highHz: Int(reading.highHz), levelDBFS: reading.levelDBFS,
                peakDBFS: reading.peakDBFS, sequence: sequence, bandsDB: reading.bandsDB))
        }
    }

    public func close() { publisher.close() }
}
