import EarshotCore
import Foundation

/// Decibel conversions. dBFS here is 20 · log10 of an amplitude relative to full scale, so a
/// full-scale sine has a peak of 0 dBFS and an RMS of −3.01 dBFS (as sox and most tools read it).
public enum Decibels {
    public static func fromAmplitude(_ amplitude: Double) -> Double {
        amplitude > 0 ? 20 * log10(amplitude) : -.infinity
    }

    public static func toAmplitude(_ decibels: Double) -> Double {
        pow(10, decibels / 20)
    }
}

/// The A-weighting curve of IEC 61672-1 as a cascade of three biquads: the analogue
/// prototype's poles (20.6, 107.7, 737.9 and 12194 Hz) mapped by the bilinear transform, and
/// the gain set to exactly 0 dB at 1 kHz.
public enum AWeighting {
    public static func filter(sampleRate: Double) -> BiquadFilter {
        func pole(_ hz: Double) -> Double {
            let s = -2 * Double.pi * hz
            return (2 * sampleRate + s) / (2 * sampleRate - s)
        }
        let p1 = pole(20.598997), p2 = pole(107.65265), p3 = pole(737.86223), p4 = pole(12194.217)
        var sections = [
            BiquadCoefficients(b0: 1, b1: -2, b2: 1, a1: -2 * p1, a2: p1 * p1),
            BiquadCoefficients(b0: 1, b1: -2, b2: 1, a1: -(p2 + p3), a2: p2 * p3),
            BiquadCoefficients(b0: 1, b1: 2, b2: 1, a1: -2 * p4, a2: p4 * p4),
        ]
        let gainAt1k = BiquadFilter(sections: sections).magnitude(atHz: 1000, sampleRate: sampleRate)
        sections[2].b0 /= gainAt1k
        sections[2].b1 /= gainAt1k
        sections[2].b2 /= gainAt1k
        return BiquadFilter(sections: sections)
    }
}

/// Peak and RMS of a signal per channel, accumulated over any number of blocks.
public struct LevelMeter {
    public let channelCount: Int
    public private(set) var frameCount = 0
    private var peaks: [Float]
    private var sumsOfSquares: [Double]

    public init(channelCount: Int) {
        self.channelCount = channelCount
        peaks = [Float](repeating: 0, count: channelCount)
        sumsOfSquares = [Double](repeating: 0, count: channelCount)
    }

    public mutating func measure(_ block: AudioBlock) {
        precondition(block.channelCount == channelCount)
        for c in 0..<channelCount {
            var peak = peaks[c], sum = 0.0
            for x in block.channel(c) {
                peak = max(peak, abs(x))
                sum += Double(x) * Double(x)
            }
            peaks[c] = peak
            sumsOfSquares[c] += sum
        }
        frameCount += block.frameCount
    }

    public func peak(channel: Int) -> Double { Double(peaks[channel]) }

    public func rms(channel: Int) -> Double {
        frameCount > 0 ? (sumsOfSquares[channel] / Double(frameCount)).squareRoot() : 0
    }

    /// The largest peak of any channel.
    public var peak: Double { Double(peaks.max() ?? 0) }

    /// RMS over every sample of every channel.
    public var rms: Double {
        frameCount > 0 ? (sumsOfSquares.reduce(0, +) / Double(frameCount * channelCount)).squareRoot() : 0
    }
}
