import EarshotAlerts
import EarshotCore
import Foundation

/// An enrolled sound recognised in a stream.
public struct SoundDetection: Equatable, Sendable {
    public var sound: String
    /// When it was announced, seconds from the stream's start.
    public var start: Double
    public var end: Double
    public var score: Double
}

/// Listens for enrolled sounds in 16 kHz audio, block by block: every 100 ms the embedding of
/// the last second (`SoundEmbedding`), scored against each sound's enrollment as the best cosine
/// with any second of it; an announcement when the score reaches the sound's threshold, the
/// event held while it stays within 0.05 of it (and 0.3 s after).
public final class SoundDetector {
    public struct Sound: Sendable {
        public var name: String
        /// The enrollment's embeddings, count × size: each second of each recording.
        public var prints: [Float]
        public var threshold: Double

        public init(name: String, prints: [Float], threshold: Double) {
            self.name = name
            self.prints = prints
            self.threshold = threshold
        }

        /// The least score announced, whatever the bank says.
        public static let baseThreshold = 0.6
        public static let highestThreshold = 0.97
        /// Above the best score on the bank: the bank is a sample of hours, not every moment.
        public static let bankMargin = 0.04
        /// Above the best score on what the user said the sound is not.
        public static let negativeMargin = 0.03

        /// A sound from its enrollment recordings (clips cut to the sound, `EnrollmentClip`),
        /// its threshold set for the false-alarm rate of the bank — above the best its prints
        /// score on hours of audio that is no one's sound — and above everything the user said
        /// it is not (room tone, rejected false alarms).
        public init(name: String, enrollments: [[Float]], negatives: [[Float]], embedding: SoundEmbedding) throws {
            guard !enrollments.isEmpty else { throw EarshotError.invalidArgument("'\(name)' has no recording to listen for") }
            let prints = enrollments.flatMap { Self.prints(of: $0, embedding: embedding) }
            var threshold = max(Self.baseThreshold, Self.best(prints, against: embedding.bank, size: embedding.size) + Self.bankMargin)
            for negative in negatives {
                let heard = embedding.embeddings(of: negative)
                threshold = max(threshold, Self.best(prints, against: heard, size: embedding.size) + Self.negativeMargin)
            }
            self.init(name: name, prints: prints, threshold: min(threshold, Self.highestThreshold))
        }

        /// The embeddings a recording of the sound is known by: every second of it heard as a
        /// stream would hear it, over a faint noise floor (a file's digital silence is no
        /// room's), from when most of a second holds the sound until it has passed; at most 40,
        /// spread over a long sound.
        public static func prints(of clip: [Float], embedding: SoundEmbedding) -> [Float] {
            let rate = EnrollmentClip.sampleRate
            let lead = Int(0.7 * rate), tail = Int(0.7 * rate)
            var padded = [Float](repeating: 0, count: lead) + clip + [Float](repeating: 0, count: tail)
            // Seeded noise 30 dB under the clip's loudest 20 ms.
            var loudest: Float = 0
            for start in Swift.stride(from: 0, to: max(1, clip.count - 320), by: 320) {
                var sum: Float = 0
                for n in start..<min(clip.count, start + 320) { sum += clip[n] * clip[n] }
                loudest = max(loudest, sum / 320)
            }
            let floor = sqrt(max(loudest, 1e-12)) * pow(10, -30 / 20)
            var random = SeededRandom(seed: 0x50D5)
            for n in padded.indices { padded[n] += floor * Float(random.nextGaussian()) }
            let all = embedding.embeddings(of: padded)
            let size = embedding.size, count = all.count / size
            // Embedding j hears the second from 0.1·j s on: keep those starting from 0.3 s before
            // the clip until half a second before its end.
            let step = SoundEmbedding.secondsPerEmbedding, leadSeconds = Double(lead) / rate
            let first = Int(((leadSeconds - 0.3) / step).rounded())
            let last = min(count - 1, max(first, Int(((leadSeconds + Double(clip.count) / rate - 0.5) / step).rounded())))
            let kept = Array(first...last)
            let chosen = kept.count <= 40 ? kept : (0..<40).map { kept[$0 * kept.count / 40] }
            return chosen.flatMap { all[($0 * size)..<(($0 + 1) * size)] }
        }

        /// The best cosine between any of `prints` and any of `heard` (both count × size).
        static func best(_ prints: [Float], against heard: [Float], size: Int) -> Double {
            var best: Float = -1
            prints.withUnsafeBufferPointer { p in
                heard.withUnsafeBufferPointer { h in
                    for j in 0..<(h.count / size) {
                        best = max(best, score(p, h.baseAddress! + j * size, size: size))
                    }
                }
            }
            return Double(best)
        }

        /// The best cosine of one embedding with any of `prints`.
        static func score(_ prints: UnsafeBufferPointer<Float>, _ embedding: UnsafePointer<Float>, size: Int) -> Float {
            var best: Float = -1
            for i in 0..<(prints.count / size) {
                var dot: Float = 0
                for k in 0..<size { dot += prints[i * size + k] * embedding[k] }
                best = max(best, dot)
            }
            return best
        }
    }

    private struct Tracking {
        let sound: Sound
        var active: (start: Double, peak: Double, last: Double)?
    }

    private let stream: EmbeddingStream
    private let size: Int
    public let embedding: SoundEmbedding
    private var tracking: [Tracking]
    public let sounds: [Sound]
    /// Below its threshold by this much, an event is over.
    static let release = 0.05

    public init(sounds: [Sound], embedding: SoundEmbedding) {
        self.sounds = sounds
        self.embedding = embedding
        stream = EmbeddingStream(embedding)
        size = embedding.size
        tracking = sounds.map { Tracking(sound: $0, active: nil) }
    }

    /// Feeds 16 kHz samples; returns the detections that ended in them. `began` hears each
    /// one as it is announced (its end and score so far), for whoever cannot wait for the end.
    public func push(_ samples: ArraySlice<Float>, began: (SoundDetection) -> Void = { _ in }) -> [SoundDetection] {
        var ended: [SoundDetection] = []
        samples.withUnsafeBufferPointer { buffer in
            stream.push(buffer) { now, embedding in
                embedding.withUnsafeBufferPointer { e in
                    for index in tracking.indices {
                        let score = Double(tracking[index].sound.prints.withUnsafeBufferPointer { Sound.score($0, e.baseAddress!, size: size) })
                        let threshold = tracking[index].sound.threshold
                        if var active = tracking[index].active {
                            if score >= threshold - Self.release {
                                active.last = now
                                active.peak = max(active.peak, score)
                                tracking[index].active = active
                            } else if now - active.last > 0.3 {
                                ended.append(SoundDetection(sound: tracking[index].sound.name, start: active.start, end: active.last, score: active.peak))
                                tracking[index].active = nil
                            }
                        } else if score >= threshold {
                            tracking[index].active = (now, score, now)
                            began(SoundDetection(sound: tracking[index].sound.name, start: now, end: now, score: score))
                        }
                    }
                }
            }
        }
        return ended
    }

    /// Ends what is still sounding at the end of the stream.
    public func finish() -> [SoundDetection] {
        defer { for index in tracking.indices { tracking[index].active = nil } }
        return tracking.compactMap { t in t.active.map { SoundDetection(sound: t.sound.name, start: $0.start, end: $0.last, score: $0.peak) } }
    }

    /// Each sound's score over a whole recording, one every 100 ms, with the time each
    /// window ends.
    public static func scores(of samples: [Float], sounds: [Sound], embedding: SoundEmbedding) -> (times: [Double], scores: [[Double]]) {
        let heard = embedding.embeddings(of: samples), size = embedding.size
        let count = heard.count / size
        let times = (0..<count).map { Double((embedding.windowFrames + $0 * SoundEmbedding.stride) * AlertFeatures.hop) / AlertFeatures.sampleRate }
        let scores = sounds.map { sound in
            sound.prints.withUnsafeBufferPointer { p in
                heard.withUnsafeBufferPointer { h in (0..<count).map { Double(Sound.score(p, h.baseAddress! + $0 * size, size: size)) } }
            }
        }
        return (times, scores)
    }
}
