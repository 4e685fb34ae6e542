import EarshotCore
import EarshotEnhance
import EarshotIO

/// The noise as the learned noise suppressor hears it: what it takes out of a recording, beside
/// the active level of what it keeps.
///
/// It hears noise under the words too, where the pauses cannot: a shot, a bark or a slammed
/// door that lands on a word reads as quiet between the words. It also takes out what is not
/// noise — a ringing room's tails, an echo, clipping's distortion and a little of the speech —
/// so the sound check uses it only to cap the reading from the pauses, and not where one of
/// those was found.
struct SuppressedNoise {
    /// The suppressor at its deepest, so that what it leaves of the noise is least.
    static let strengthDB = 40.0
    /// The reading from the pauses may stand at most this far above this one: what it takes of
    /// the speech makes this reading low. Chosen among 2–10 dB on the tuning material of `make
    /// eval-soundcheck` (its tuning set, the tuning noises and the knocks and bangs of no real
    /// recording at 0–30 dB): the least error on the bangs that adds no false finding there
    /// (5 dB calls one more clean recording noisy).
    static let allowanceDB = 6.0

    /// Active level (power) of what the suppressor keeps.
    let keptSpeechPower: Double
    /// What it takes out: its mean power per bin over the whole recording, one 32 ms frame.
    let removed: PowerSpectrogram

    /// `signal`: the recording at 16 kHz, without its offset.
    init(_ signal: [Float], sampleRate: Double) throws {
        let suppressor = try NoiseSuppressor(model: .learned, strengthDB: Self.strengthDB)
        let sink = MemorySink(channelCount: 1)
        // Compensated, so that what it keeps lines up with the recording sample for sample.
        try Runner(blockFrames: 1024).run(source: MemorySource(channels: [signal], sampleRate: sampleRate), chain: suppressor, sink: sink)
        let kept = sink.channels[0]
        keptSpeechPower = SpeechActivity.activeLevel(SpeechActivity.tenMillisecondPowers(kept, sampleRate: sampleRate))
        removed = PowerSpectrogram(zip(signal, kept).map { $0 - $1 }, sampleRate: sampleRate, frameSeconds: 0.032, hopSeconds: 0.01).averaged
    }
}
