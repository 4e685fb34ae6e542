import EarshotCore
import Foundation

/// Normalised second-order section coefficients (a0 = 1).
public struct BiquadCoefficients: Equatable, Sendable {
    public var b0, b1, b2, a1, a2: Double

    public init(b0: Double, b1: Double, b2: Double, a1: Double, a2: Double) {
        (self.b0, self.b1, self.b2, self.a1, self.a2) = (b0, b1, b2, a1, a2)
    }

    /// The filter types of Robert Bristow-Johnson's Audio EQ Cookbook.
    public enum Kind: Equatable, Sendable {
        case lowPass, highPass
        /// Band-pass with 0 dB gain at the centre.
        case bandPass
        case notch, allPass
        case peaking(gainDB: Double)
        case lowShelf(gainDB: Double)
        case highShelf(gainDB: Double)
    }

    /// Designs a cookbook filter at `frequencyHz` with quality `q` (shelves use q as their slope
    /// parameter via Q, as the cookbook allows).
    public init(_ kind: Kind, frequencyHz: Double, q: Double = 1 / 2.0.squareRoot(), sampleRate: Double) {
        precondition(frequencyHz > 0 && frequencyHz < sampleRate / 2 && q > 0)
        let w0 = 2 * Double.pi * frequencyHz / sampleRate
        let cosW = cos(w0), alpha = sin(w0) / (2 * q)
        var b0, b1, b2, a0, a1, a2: Double
        switch kind {
        case .lowPass:
            (b0, b1, b2) = ((1 - cosW) / 2, 1 - cosW, (1 - cosW) / 2)
            (a0, a1, a2) = (1 + alpha, -2 * cosW, 1 - alpha)
        case .highPass:
            (b0, b1, b2) = ((1 + cosW) / 2, -(1 + cosW), (1 + cosW) / 2)
            (a0, a1, a2) = (1 + alpha, -2 * cosW, 1 - alpha)
        case .bandPass:
            (b0, b1, b2) = (alpha, 0, -alpha)
            (a0, a1, a2) = (1 + alpha, -2 * cosW, 1 - alpha)
        case .notch:
            (b0, b1, b2) = (1, -2 * cosW, 1)
            (a0, a1, a2) = (1 + alpha, -2 * cosW, 1 - alpha)
        case .allPass:
            (b0, b1, b2) = (1 - alpha, -2 * cosW, 1 + alpha)
            (a0, a1, a2) = (1 + alpha, -2 * cosW, 1 - alpha)
        case .peaking(let gainDB):
            let a = pow(10, gainDB / 40)
            (b0, b1, b2) = (1 + alpha * a, -2 * cosW, 1 - alpha * a)
            (a0, a1, a2) = (1 + alpha / a, -2 * cosW, 1 - alpha / a)
        case .lowShelf(let gainDB):
            let a = pow(10, gainDB / 40), s = 2 * a.squareRoot() * alpha
            b0 = a * ((a + 1) - (a - 1) * cosW + s)
            b1 = 2 * a * ((a - 1) - (a + 1) * cosW)
            b2 = a * ((a + 1) - (a - 1) * cosW - s)
            a0 = (a + 1) + (a - 1) * cosW + s
            a1 = -2 * ((a - 1) + (a + 1) * cosW)
            a2 = (a + 1) + (a - 1) * cosW - s
        case .highShelf(let gainDB):
            let a = pow(10, gainDB / 40), s = 2 * a.squareRoot() * alpha
            b0 = a * ((a + 1) + (a - 1) * cosW + s)
            b1 = -2 * a * ((a - 1) + (a + 1) * cosW)
            b2 = a * ((a + 1) + (a - 1) * cosW - s)
            a0 = (a + 1) - (a - 1) * cosW + s
            a1 = 2 * ((a - 1) - (a + 1) * cosW)
            a2 = (a + 1) - (a - 1) * cosW - s
        }
        self.init(b0: b0 / a0, b1: b1 / a0, b2: b2 / a0, a1: a1 / a0, a2: a2 / a0)
    }

    /// Complex gain |H(e^jω)| at `frequencyHz`.
    public func magnitude(atHz frequencyHz: Double, sampleRate: Double) -> Double {
        let w = 2 * Double.pi * frequencyHz / sampleRate
        func evaluate(_ c0: Double, _ c1: Double, _ c2: Double) -> (Double, Double) {
            (c0 + c1 * cos(w) + c2 * cos(2 * w), -c1 * sin(w) - c2 * sin(2 * w))
        }
        let (nr, ni) = evaluate(b0, b1, b2), (dr, di) = evaluate(1, a1, a2)
        return ((nr * nr + ni * ni) / (dr * dr + di * di)).squareRoot()
    }
}

/// One biquad section's running state, transposed direct form II (good numerical behaviour
/// in floating point; the state is kept in Double so low cut-offs stay clean).
public struct BiquadState: Sendable {
    private var s1 = 0.0, s2 = 0.0
    public init() {}

    @inline(__always)
    public mutating func tick(_ x: Double, _ c: BiquadCoefficients) -> Double {
        let y = c.b0 * x + s1
        s1 = c.b1 * x - c.a1 * y + s2
        s2 = c.b2 * x - c.a2 * y
        return y
    }

    public mutating func reset() { (s1, s2) = (0, 0) }
}

/// A cascade of biquad sections applied to every channel.
public final class BiquadFilter: AudioProcessor {
    public let sections: [BiquadCoefficients]
    private var states: [BiquadState] = []  // channel-major: channel * sections.count + section
    private var channelCount = 0

    public init(sections: [BiquadCoefficients]) {
        self.sections = sections
    }

    public convenience init(_ kind: BiquadCoefficients.Kind, frequencyHz: Double, q: Double = 1 / 2.0.squareRoot(), sampleRate: Double) {
        self.init(sections: [BiquadCoefficients(kind, frequencyHz: frequencyHz, q: q, sampleRate: sampleRate)])
    }

    public var latencySamples: Int { 0 }

    public func prepare(_ spec: ProcessSpec) throws {
        channelCount = spec.channelCount
        states = [BiquadState](repeating: BiquadState(), count: spec.channelCount * sections.count)
    }

    public func reset() {
        for i in states.indices { states[i].reset() }
    }

    public func process(_ block: inout AudioBlock) {
        let sectionCount = sections.count
        sections.withUnsafeBufferPointer { sections in
            states.withUnsafeMutableBufferPointer { states in
                for c in 0..<min(block.channelCount, channelCount) {
                    let samples = block.channel(c)
                    for i in 0..<samples.count {
                        var x = Double(samples[i])
                        for s in 0..<sectionCount { x = states[c * sectionCount + s].tick(x, sections[s]) }
                        samples[i] = Float(x)
                    }
                }
            }
        }
    }

    /// Magnitude of the whole cascade at `frequencyHz`.
    public func magnitude(atHz frequencyHz: Double, sampleRate: Double) -> Double {
        sections.reduce(1) { $0 * $1.magnitude(atHz: frequencyHz, sampleRate: sampleRate) }
    }
}

extension BiquadFilter {
    /// Filters a whole signal forwards and then backwards: the magnitude response squared,
    /// no phase shift, so nothing moves in time. Offline only.
    public func zeroPhase(_ signal: [Float], sampleRate: Double) -> [Float] {
        guard !signal.isEmpty else { return [] }
        func pass(_ x: [Float]) -> [Float] {
            let filter = BiquadFilter(sections: sections)
            try? filter.prepare(ProcessSpec(sampleRate: sampleRate, maximumBlockFrames: x.count, channelCount: 1))
            let buffer = AudioBuffer(channels: [x])
            var block = buffer.block()
            filter.process(&block)
            return Array(buffer.channel(0))
        }
        return pass(pass(signal).reversed()).reversed()
    }
}
