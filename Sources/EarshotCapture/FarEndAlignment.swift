import EarshotCore
import EarshotIO

extension MonoRecording {
    /// `path` as what a loudspeaker played while this was recorded, ready for the echo
    /// canceller: mono, at this recording's rate, as long as it (silence after it ends),
    /// stretched to the microphone's clock where the delay drifts steadily (`EchoDelay.drift`),
    /// and moved up to just before the loudspeaker's earliest arrival where that can be read off
    /// the two (`EchoDelay.align`). Returns it with the filter length that then covers the echo.
    public func farEnd(_ path: String, longestTailSeconds: Double) throws -> (samples: [Float], tailSeconds: Double) {
        let far = try MonoRecording(path: path)
        var signal = far.samples
        if far.info.sampleRate != info.sampleRate {
            signal = try Resampler.resample([signal], from: far.info.sampleRate, to: info.sampleRate)[0]
        }
        signal = Array(signal.prefix(samples.count)) + [Float](repeating: 0, count: max(0, samples.count - signal.count))
        // A loudspeaker on its own clock: the far end stretched to the microphone's.
        if let drift = EchoDelay.drift(mic: samples, far: signal, sampleRate: info.sampleRate) {
            signal = try Resampler.resample([signal], from: info.sampleRate, to: info.sampleRate * (1 + drift))[0]
            signal = Array(signal.prefix(samples.count)) + [Float](repeating: 0, count: max(0, samples.count - signal.count))
        }
        return EchoDelay.align(far: signal, to: samples, sampleRate: info.sampleRate, longestTailSeconds: longestTailSeconds)
    }
}
