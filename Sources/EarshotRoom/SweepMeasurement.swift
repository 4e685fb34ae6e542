import EarshotCore
import EarshotDSP
import Foundation

/// An exponential (logarithmic) sine sweep for measuring impulse responses (Farina).
///
/// Played into a system and recorded, it is deconvolved into the linear impulse response, and
/// because each harmonic of an exponential sweep is the sweep itself shifted earlier in time,
/// the distortion products land before it, one separate response per harmonic.
public struct ExponentialSweep: Sendable {
    public let startHz: Double
    public let endHz: Double
    public let durationSeconds: Double
    public let sampleRate: Double
    /// The sweep, with 10 ms / 5 ms raised-cosine fades so it starts and stops without a click.
    public let signal: [Float]

    /// The peak level of a sweep at the default amplitude.
    public static let levelDBFS = 20 * log10(0.5)

    public init(startHz: Double = 20, endHz: Double? = nil, durationSeconds: Double = 10, sampleRate: Double, amplitude: Double = 0.5) throws {
        try EarshotError.validate(sampleRate: sampleRate)
        let top = endHz ?? min(20_000, 0.45 * sampleRate)
        guard startHz > 0, top > startHz * 2, top < sampleRate / 2 else {
            throw RoomError.sweepRange(startHz: startHz, endHz: top, nyquistHz: sampleRate / 2)
        }
        guard durationSeconds.isFinite, durationSeconds >= 0.1, durationSeconds <= 120 else {
            throw RoomError.sweepDuration(seconds: durationSeconds)
        }
        guard amplitude > 0, amplitude <= 1 else { throw RoomError.sweepAmplitude }
        self.startHz = startHz
        self.endHz = top
        self.durationSeconds = durationSeconds
        self.sampleRate = sampleRate
        let count = Int(durationSeconds * sampleRate)
        let rate = log(top / startHz)
        let fadeIn = 0.01 * sampleRate, fadeOut = 0.005 * sampleRate
        signal = (0..<count).map { n in
            let t = Double(n) / sampleRate
            let phase = 2 * Double.pi * startHz * durationSeconds / rate * (exp(t * rate / durationSeconds) - 1)
            var gain = amplitude
            if Double(n) < fadeIn { gain *= 0.5 - 0.5 * cos(Double.pi * Double(n) / fadeIn) }
            if Double(count - 1 - n) < fadeOut { gain *= 0.5 - 0.5 * cos(Double.pi * Double(count - 1 - n) / fadeOut) }
            return Float(gain * sin(phase))
        }
    }

    /// How much earlier than the linear response the n-th harmonic's response appears, in seconds.
    public func harmonicAdvance(_ n: Int) -> Double {
        durationSeconds * log(Double(n)) / log(endHz / startHz)
    }

    /// The responses hidden in a recording of this sweep.
    public struct Responses: Sendable {
        /// The linear impulse response, from the moment the sweep started playing.
        public var linear: [Float]
        /// Responses of the 2nd, 3rd, … harmonic distortion products.
        public var harmonics: [[Float]]
    }

    /// Deconvolves `recording` (the sweep as it came back, plus the room's tail).
    ///
    /// Division by the sweep's spectrum, regularised (Kirkeby) so bins outside the swept band,
    /// where the sweep carries no energy, are left near zero rather than amplified noise.
    public func deconvolve(_ recording: [Float], responseSeconds: Double? = nil, harmonicCount: Int = 4) throws -> Responses {
        guard recording.count > signal.count else {
            throw RoomError.recordingShorterThanSweep(recordingFrames: recording.count, sweepFrames: signal.count)
        }
        guard recording.allSatisfy({ $0.isFinite }) else { throw EarshotError.nonFiniteSamples(path: "recording", frame: 0) }
        let size = RealFFT.fastSize(atLeast: recording.count + signal.count)
        let fft = RealFFT(size: size)
        let sweepSpectrum = Convolution.spectrum(of: signal, using: fft)
        Convolution.load(recording, into: fft)
        fft.forward()
        var strongest: Float = 0
        for k in 0..<fft.binCount {
            strongest = max(strongest, sweepSpectrum[2 * k] * sweepSpectrum[2 * k] + sweepSpectrum[2 * k + 1] * sweepSpectrum[2 * k + 1])
        }
        let binHz = sampleRate / Double(size)
        for k in 0..<fft.binCount {
            let hz = Double(k) * binHz
            // Full trust inside the band, a half-octave ramp at each edge, none beyond.
            let inBand = min(1, max(0, log2(hz / startHz) * 2 + 1), max(0, log2(endHz / max(hz, 1e-9)) * 2 + 1))
            let epsilon = strongest * Float(1e-7 + (1 - min(inBand, 1)) * 1e-1)
            let xr = sweepSpectrum[2 * k], xi = sweepSpectrum[2 * k + 1]
            let yr = fft.spectrum[2 * k], yi = fft.spectrum[2 * k + 1]
            let denominator = xr * xr + xi * xi + epsilon
            fft.spectrum[2 * k] = (yr * xr + yi * xi) / denominator
            fft.spectrum[2 * k + 1] = (yi * xr - yr * xi) / denominator
        }
        fft.inverse()
        let responseLength = min(size / 2, responseSeconds.map { Int($0 * sampleRate) } ?? (recording.count - signal.count))
        let linear = Array(fft.time[0..<max(1, responseLength)])
        // Harmonic n sits just before time zero (wrapped to the end of the circular result),
        // between the advances of harmonics n and n − 1.
        var harmonics: [[Float]] = []
        for n in 2..<(2 + max(0, harmonicCount)) {
            let start = Int((harmonicAdvance(n) * sampleRate).rounded())
            let previous = Int((harmonicAdvance(n - 1) * sampleRate).rounded())
            let length = min(start - previous, responseLength)
            guard length > 0, start < size else { break }
            harmonics.append((0..<length).map { fft.time[(size - start + $0) % size] })
        }
        return Responses(linear: linear, harmonics: harmonics)
    }
}

extension ExponentialSweep {
    /// Every channel of a recording of the sweep deconvolved, each response (linear, then each
    /// harmonic's) cut to the channels' common length.
    public struct Measurement: Sendable {
        /// The impulse response, one per channel.
        public var linear: [[Float]]
        /// The 2nd, 3rd, … harmonic distortion responses, one per channel each.
        public var harmonics: [[[Float]]]
        /// When the direct sound arrives (the first sample within 20 dB of the peak), device
        /// latency included.
        public var directSoundSeconds: Double
    }

    public func measure(_ recording: [[Float]], responseSeconds: Double) throws -> Measurement {
        let responses = try recording.map { try deconvolve($0, responseSeconds: responseSeconds) }
        func common(_ channels: [[Float]]) -> [[Float]] {
            let length = channels.map(\.count).min() ?? 0
            return channels.map { Array($0.prefix(length)) }
        }
        let linear = common(responses.map(\.linear))
        let harmonics = (0..<(responses.first?.harmonics.count ?? 0)).map { n in common(responses.map { $0.harmonics[n] }) }
        let first = linear.first ?? []
        let peak = first.map { abs($0) }.max() ?? 0
        let onset = first.firstIndex { abs($0) >= 0.1 * peak } ?? 0
        return Measurement(linear: linear, harmonics: harmonics, directSoundSeconds: Double(onset) / sampleRate)
    }
}
