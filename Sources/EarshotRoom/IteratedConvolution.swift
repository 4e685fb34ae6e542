import EarshotCore
import EarshotDSP
import Foundation

/// "I am sitting in a room": a recording played into a room and re-recorded, again and again.
///
/// Generation k is the source convolved k times with the room's response, which in the
/// frequency domain is X·Hᵏ. With one FFT size large enough for the last generation, every
/// generation is exact (no circular wrap), and each costs one complex multiply per bin plus an
/// inverse FFT only when it is wanted: 32 generations cost little more than one.
public struct IteratedConvolution {
    public let source: [[Float]]
    public let response: [[Float]]
    public let channelCount: Int

    /// The longest generation computed (2²⁷ frames: 46 minutes at 48 kHz; about 2 GB of work space).
    public static let maximumFrames = 1 << 27

    public init(source: [[Float]], response: [[Float]]) throws {
        guard let sourceLength = source.first?.count, sourceLength > 0, source.allSatisfy({ $0.count == sourceLength }) else {
            throw RoomError.silentSource
        }
        guard let responseLength = response.first?.count, responseLength > 0, response.allSatisfy({ $0.count == responseLength }) else {
            throw RoomError.emptyResponse
        }
        guard response.contains(where: { $0.contains { $0 != 0 } }) else {
            throw RoomError.silentResponse
        }
        channelCount = try Convolution.outputChannelCount(source.count, response.count)
        self.source = source
        self.response = response
    }

    /// Frames in generation k.
    public func length(ofGeneration k: Int) -> Int {
        source[0].count + k * (response[0].count - 1)
    }

    /// Computes the generations in `wanted` (up to `last`) and hands each (all channels, exact,
    /// unnormalised) to `deliver` as soon as it is ready; `progress` hears each one's number.
    public func run(
        through last: Int, wanted: Set<Int>, progress: ((Int) -> Void)? = nil,
        deliver: (_ generation: Int, _ channels: [[Float]]) throws -> Void
    ) throws {
        guard last >= 1 else { throw RoomError.noGeneration }
        guard length(ofGeneration: last) <= Self.maximumFrames else {
            throw RoomError.generationTooLong(generation: last, frames: length(ofGeneration: last), maximumFrames: Self.maximumFrames)
        }
        let size = RealFFT.fastSize(atLeast: length(ofGeneration: last))
        let fft = RealFFT(size: size)
        let bins = fft.binCount

        // Per output channel: the source spectrum, and the response spectrum scaled so its
        // largest bin is 1 (|H|ᵏ would overflow Float for resonant rooms); the scale is put
        // back in Double when a generation is read out.
        var running: [[Float]] = []
        var normalizedResponses: [[Float]] = []
        var scales: [Double] = []
        for c in 0..<channelCount {
            let h = Convolution.spectrum(of: response[response.count == 1 ? 0 : c], using: fft)
            var peak: Float = 0
            for k in 0..<bins {
                let re = h[2 * k], im = h[2 * k + 1]
                peak = max(peak, (re * re + im * im).squareRoot())
            }
            normalizedResponses.append(h.map { $0 / peak })
            scales.append(Double(peak))
            running.append(Convolution.spectrum(of: source[source.count == 1 ? 0 : c], using: fft))
        }

        // Walk the wanted generations in order: from one to the next the running spectrum is
        // multiplied by Hⁿ for the gap n, itself made by repeated squaring, so reaching only
        // the 32nd generation takes six complex multiplies per bin rather than thirty-two.
        var reached = 0
        for k in wanted.filter({ $0 >= 1 && $0 <= last }).sorted() {
            for c in 0..<channelCount {
                let step = Self.power(normalizedResponses[c], k - reached)
                running[c].withUnsafeMutableBufferPointer { Convolution.multiply($0, by: step) }
            }
            reached = k
            let frames = length(ofGeneration: k)
            var channels: [[Float]] = []
            for c in 0..<channelCount {
                running[c].withUnsafeBufferPointer { fft.spectrum.baseAddress!.update(from: $0.baseAddress!, count: $0.count) }
                fft.inverse()
                let gain = pow(scales[c], Double(k))
                let samples = (0..<frames).map { Float(Double(fft.time[$0]) * gain) }
                guard gain < Double(Float.greatestFiniteMagnitude), samples.allSatisfy({ $0.isFinite }) else {
                    throw RoomError.generationOverflows(generation: k)
                }
                channels.append(samples)
            }
            try deliver(k, channels)
            progress?(k)
        }
    }

    /// Hⁿ bin by bin (interleaved re, im), by repeated squaring.
    static func power(_ spectrum: [Float], _ exponent: Int) -> [Float] {
        precondition(exponent >= 1)
        if exponent == 1 { return spectrum }
        var result: [Float]? = nil
        var square = spectrum
        var n = exponent
        while n > 0 {
            if n & 1 == 1 {
                if result == nil {
                    result = square
                } else {
                    result!.withUnsafeMutableBufferPointer { Convolution.multiply($0, by: square) }
                }
            }
            n >>= 1
            if n > 0 {
                let copy = square
                square.withUnsafeMutableBufferPointer { Convolution.multiply($0, by: copy) }
            }
        }
        return result!
    }
}

/// How each generation is brought to a listenable level.
public enum GenerationNormalization: String, CaseIterable, Sendable {
    /// The loudest sample of any channel at −1 dBFS.
    case peak
    /// −23 LUFS (EBU R 128), lowered if needed so no sample exceeds −1 dBFS.
    case loudness
    /// The exact result.
    case none

    public static let peakCeilingDBFS = -1.0
    public static let loudnessTargetLUFS = -23.0

    /// Applies one gain to every channel (so stereo balance is kept); returns the gain in dB.
    @discardableResult
    public func apply(to channels: inout [[Float]], sampleRate: Double) -> Double {
        guard self != .none else { return 0 }
        let peak = channels.reduce(Float(0)) { max($0, $1.reduce(0) { max($0, abs($1)) }) }
        guard peak > 0 else { return 0 }
        let peakLimitedGain = Self.peakCeilingDBFS - Decibels.fromAmplitude(Double(peak))
        var gainDB = peakLimitedGain
        if self == .loudness, let measured = Loudness.integrated(channels, sampleRate: sampleRate) {
            gainDB = min(Self.loudnessTargetLUFS - measured, peakLimitedGain)
        }
        let factor = Float(Decibels.toAmplitude(gainDB))
        for c in channels.indices { for i in channels[c].indices { channels[c][i] *= factor } }
        return gainDB
    }
}

/// Cuts the silent tail a generation accumulates: everything after the last sample within
/// `floorDB` of the peak, ending in a 10 ms fade.
public func trimTail(_ channels: inout [[Float]], sampleRate: Double, floorDB: Double = -60) {
    let peak = channels.reduce(Float(0)) { max($0, $1.reduce(0) { max($0, abs($1)) }) }
    guard peak > 0 else { return }
    let threshold = peak * Float(Decibels.toAmplitude(floorDB))
    let last = channels.map { $0.lastIndex { abs($0) >= threshold } ?? 0 }.max() ?? 0
    let fade = Int(0.01 * sampleRate)
    let end = min(channels[0].count, last + 1 + fade)
    for c in channels.indices {
        channels[c].removeSubrange(end...)
        for i in 0..<min(fade, end) {
            channels[c][end - 1 - i] *= Float(i) / Float(fade)
        }
    }
}
