import EarshotAlerts
import EarshotCore
import Foundation

/// What the listening chain does to an input whose alert component is known: the mix runs
/// with its alert alone and the rest (mix − alert) as probe channels, which get exactly the
/// mix's gains, so each component's output is measured, not estimated.
public struct AlertProbe {
    /// Output channels, delay removed: the mix, its alert, the rest.
    public let output: [[Float]]
    public let alerts: [Float]
    public let rest: [Float]
    public let latencySamples: Int

    /// - Parameters:
    ///   - network: the detector; nil runs the enhancement alone.
    ///   - afterBlock: sees the detector after each block (to collect its events).
    public init(mix: [Float], alerts: [Float], sampleRate: Double, network: AlertNetwork?, separate: Bool,
                blockFrames: Int = 256, afterBlock: (AlertDetector) -> Void = { _ in }) throws {
        guard mix.count == alerts.count else {
            throw HearingAidError.trackLengths(alerts: alerts.count, mix: mix.count)
        }
        let chain = try ListeningChain(detector: network, separate: separate, probeChannels: true, maximumOutputDBFS: nil)
        try chain.prepare(ProcessSpec(sampleRate: sampleRate, maximumBlockFrames: blockFrames, channelCount: 3))
        let latency = chain.latencySamples
        let rest = zip(mix, alerts).map { $0 - $1 }
        let padding = [Float](repeating: 0, count: latency)
        let buffer = AudioBuffer(channels: [mix + padding, alerts + padding, rest + padding])
        let total = mix.count + latency
        for start in stride(from: 0, to: total, by: blockFrames) {
            var block = buffer.block().frames(from: start, count: min(blockFrames, total - start))
            chain.process(&block)
            if let detector = chain.detector { afterBlock(detector) }
        }
        output = buffer.toArrays().map { Array($0[latency...]) }
        self.alerts = alerts
        self.rest = rest
        latencySamples = latency
    }

    /// The alert's level out − in over `range`, dB.
    public func alertChangeDB(over range: Range<Int>) -> Double { Self.changeDB(output[1], alerts, range) }

    /// The rest's (speech and noise) level out − in over `range`, dB.
    public func restChangeDB(over range: Range<Int>) -> Double { Self.changeDB(output[2], rest, range) }

    private static func changeDB(_ out: [Float], _ input: [Float], _ range: Range<Int>) -> Double {
        func energy(_ x: [Float]) -> Double { x[range].reduce(0.0) { $0 + Double($1) * Double($1) } }
        return 10 * log10(energy(out) / energy(input))
    }
}
