import EarshotCore
import EarshotIO
import Foundation

/// A recording offered to enroll a sound, checked and cut to the sound: mono at 16 kHz, the
/// sound with a quarter second either side. Whatever a user has will do — a recording that
/// starts at the sound's onset and rings out, one that is all sound, a sound file — and is
/// refused, with the reason and what to do, only when it is too short, silent, clipped or
/// holds nothing that stands out from its own background, tonal or not.
public struct EnrollmentClip: Equatable, Sendable {
    public static let sampleRate = 16_000.0
    /// The sound and its margins.
    public var samples: [Float]
    /// How long the sound itself lasts.
    public var soundSeconds: Double
    /// How far the sound stands above the recording's quietest moments, dB.
    public var contrastDB: Double
    /// The loudest sample, dBFS.
    public var peakDBFS: Double

    static let frameSeconds = 0.02
    static let margin = 0.25
    static let minimumRecordingSeconds = 0.5
    static let minimumSoundSeconds = 0.08
    static let minimumContrastDB = 10.0
    static let silentPeakDBFS = -50.0
    static let clippedShare = 0.001

    /// A recording, mono at 16 kHz; `clippedFraction` is the share of its samples at full scale,
    /// measured on the file as it was (resampling softens clipped peaks).
    public init(mono samples: [Float], sampleRate: Double, clippedFraction: Double, source: String) throws {
        let seconds = Double(samples.count) / sampleRate
        guard seconds >= Self.minimumRecordingSeconds else {
            throw SoundsError.tooShort(source: source, seconds: seconds)
        }
        let peak = samples.reduce(Float(0)) { max($0, abs($1)) }
        let peakDBFS = 20 * log10(max(Double(peak), 1e-10))
        guard peak > 0 else { throw SoundsError.digitalSilence(source: source) }
        guard peakDBFS >= Self.silentPeakDBFS else {
            throw SoundsError.silent(source: source, peakDBFS: peakDBFS)
        }
        guard clippedFraction <= Self.clippedShare else {
            throw SoundsError.clipped(source: source, share: clippedFraction)
        }
        // 20 ms frame levels: the background is the quietest tenth, the sound whatever stands
        // 10 dB above it.
        let hop = max(1, Int(sampleRate * Self.frameSeconds))
        let levels = stride(from: 0, to: samples.count - hop + 1, by: hop).map { start -> Double in
            var sum = 0.0
            for n in start..<(start + hop) { sum += Double(samples[n] * samples[n]) }
            return 10 * log10(max(sum / Double(hop), 1e-10))  // −100 dBFS: digital silence counts as a very quiet room
        }
        let sorted = levels.sorted()
        let floor = sorted[sorted.count / 10], loudest = sorted[min(sorted.count - 1, sorted.count * 95 / 100)]
        let contrast = loudest - floor
        var loud = levels.indices.filter { levels[$0] >= floor + Self.minimumContrastDB }
        if contrast < Self.minimumContrastDB {
            // A recording that is all sound (cut tight around a chime) has no quiet to stand out
            // from; it is still usable when the sound is tonal throughout.
            let landmarks = sampleRate == LandmarkAnalyzer.sampleRate ? LandmarkAnalyzer.landmarks(of: samples) : []
            guard landmarks.reduce(0, { $0 + $1.nonzeroBitCount }) >= SoundTemplate.minimumLandmarks * 2 else {
                throw SoundsError.noDistinctSound(source: source, contrastDB: contrast)
            }
            loud = Array(levels.indices)
        }
        guard let first = loud.first, let last = loud.last else {
            throw SoundsError.noDistinctSound(source: source, contrastDB: nil)
        }
        let soundSeconds = Double(last - first + 1) * Double(hop) / sampleRate
        guard soundSeconds >= Self.minimumSoundSeconds else {
            throw SoundsError.soundTooShort(source: source, seconds: soundSeconds)
        }
        let margin = Int(Self.margin * sampleRate)
        let start = max(0, first * hop - margin), end = min(samples.count, (last + 1) * hop + margin)
        self.samples = Array(samples[start..<end])
        self.soundSeconds = soundSeconds
        contrastDB = contrast
        self.peakDBFS = peakDBFS
    }
}

extension EnrollmentClip {
    /// Reads a recording of any rate and channel count and checks it.
    public init(path: String) throws {
        let recording = try MatchingAudio(path: path)
        try self.init(mono: recording.samples, sampleRate: Self.sampleRate, clippedFraction: recording.clippedFraction,
                      source: (path as NSString).lastPathComponent)
    }
}

/// A recording as the matcher hears it: the channels mixed to mono, at 16 kHz; and the share of
/// the file's samples at full scale, counted before resampling softened them.
public struct MatchingAudio: Sendable {
    public var samples: [Float]
    public var clippedFraction: Double

    public init(path: String) throws {
        let (info, buffer) = try AudioFile.read(path: path)
        let channels = buffer.toArrays(frameCount: info.frameCount)
        var atFullScale = 0
        for channel in channels { for sample in channel where abs(sample) >= 0.999 { atFullScale += 1 } }
        var mono = [Float](repeating: 0, count: info.frameCount)
        for channel in channels { for n in mono.indices { mono[n] += channel[n] / Float(channels.count) } }
        samples = info.sampleRate == EnrollmentClip.sampleRate ? mono : try Resampler.resample([mono], from: info.sampleRate, to: EnrollmentClip.sampleRate)[0]
        clippedFraction = Double(atFullScale) / Double(max(1, info.frameCount * channels.count))
    }
}

/// A recording of the place without the sound: evidence of what the sound is not. Needs a
/// second of audio that is not clipped; quiet is fine.
public struct RoomTone: Equatable, Sendable {
    public var samples: [Float]

    public init(path: String) throws {
        let recording = try MatchingAudio(path: path)
        let source = (path as NSString).lastPathComponent, seconds = Double(recording.samples.count) / EnrollmentClip.sampleRate
        guard seconds >= 1 else {
            throw SoundsError.roomToneTooShort(source: source, seconds: seconds)
        }
        guard recording.clippedFraction <= EnrollmentClip.clippedShare else {
            throw SoundsError.roomToneClipped(source: source)
        }
        samples = recording.samples
    }
}
