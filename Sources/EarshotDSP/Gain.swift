import EarshotCore
import Foundation

/// A fixed gain in decibels.
public final class Gain: AudioProcessor {
    public let gainDB: Double
    private let factor: Float

    public init(gainDB: Double) {
        self.gainDB = gainDB
        factor = Float(Decibels.toAmplitude(gainDB))
    }

    public var latencySamples: Int { 0 }
    public func prepare(_ spec: ProcessSpec) throws {}
    public func reset() {}

    public func process(_ block: inout AudioBlock) {
        for c in 0..<block.channelCount {
            let samples = block.channel(c)
            for i in samples.indices { samples[i] *= factor }
        }
    }
}

/// The last stage before anything reaches the ears: no output sample ever exceeds
/// `ceilingDBFS`.
///
/// Gain drops instantly to whatever keeps the loudest channel at the ceiling and recovers
/// over `releaseSeconds`, so the guard adds no delay; a final clamp catches rounding, and
/// non-finite samples become silence.
public final class OutputLevelGuard: AudioProcessor {
    public let ceilingDBFS: Double
    public let releaseSeconds: Double
    private let ceiling: Float
    private var releaseCoefficient: Float = 0
    private var gain: Float = 1

    public init(ceilingDBFS: Double, releaseSeconds: Double = 0.2) {
        precondition(ceilingDBFS <= 0, "the ceiling is at most full scale")
        self.ceilingDBFS = ceilingDBFS
        self.releaseSeconds = releaseSeconds
        ceiling = Float(Decibels.toAmplitude(ceilingDBFS))
    }

    public var latencySamples: Int { 0 }

    public func prepare(_ spec: ProcessSpec) throws {
        releaseCoefficient = Float(exp(-1 / (max(releaseSeconds, 1e-4) * spec.sampleRate)))
    }

    public func reset() { gain = 1 }

    /// The gain currently applied (1 when nothing is being limited).
    public var currentGain: Float { gain }

    public func process(_ block: inout AudioBlock) {
        for i in 0..<block.frameCount {
            var loudest: Float = 0
            for c in 0..<block.channelCount {
                let x = block.channel(c)[i]
                if x.isFinite { loudest = max(loudest, abs(x)) } else { block.channel(c)[i] = 0 }
            }
            let allowed = loudest > ceiling ? ceiling / loudest : 1
            gain = min(allowed, 1 - (1 - gain) * releaseCoefficient)
            for c in 0..<block.channelCount {
                let channel = block.channel(c)
                channel[i] = min(ceiling, max(-ceiling, channel[i] * gain))
            }
        }
    }
}
