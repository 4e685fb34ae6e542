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

/// Listens for enrolled sounds in 16 kHz audio, block by block, two ways at once:
/// - every 100 ms the embedding of the last second (`SoundEmbedding`), scored against each sound's
///   enrollment as a run: the mean cosine of the stream's last `run` embeddings with as many
///   consecutive ones of the enrollment, at the best point of it (a chance likeness of one second
///   to another is common; of several in a row, in order, rare);
/// - every 16 ms the tonal picture (`TonalPicture`) of the last 0.6 s against each stretch of the
///   sound's tonal templates (`TonalScorer`), for the sounds that have one: what a chime, a beep
///   or a horn is known by when noise or a room has moved its embedding.
/// A sound is announced when either reaches its threshold, or both come within `agreement` of
/// theirs (less, where what the user rejected came that near), checked every 100 ms on the tonal
/// frames finished by then; the event is held while it stays within 0.05 (and 0.3 s after).
public final class SoundDetector {
    /// Embeddings a run holds: half a second of the stream.
    public static let run = 5

    public struct Sound: Sendable {
        public var name: String
        /// The enrollment's embeddings, count × size: each second of each recording, 100 ms apart.
        public var prints: [Float]
        /// For each print, how many prints before it come from the same recording.
        public var runBack: [Int]
        public var threshold: Double
        /// The tonal pictures of its recordings that hold enough to know it by.
        public var templates: [TonalTemplate]
        public var tonalThreshold: Double
        /// How near both thresholds the two matchers must come at once: narrower than
        /// `SoundDetector.agreement` when what the user rejected came that near.
        public var agreement = SoundDetector.agreement

        public init(name: String, prints: [Float], runBack: [Int], threshold: Double, templates: [TonalTemplate] = [], tonalThreshold: Double = 1) {
            self.name = name
            self.prints = prints
            self.runBack = runBack
            self.threshold = threshold
            self.templates = templates
            self.tonalThreshold = tonalThreshold
        }

        /// The least score announced, whatever the bank says.
        public static let baseThreshold = 0.6
        public static let highestThreshold = 0.97
        /// How far above the best single embedding on the bank: the bank is a sample of hours,
        /// not every moment of them, and a run scores below its best moment.
        public static let bankMargin = 0.0
        /// Above the best score on what the user said the sound is not.
        public static let negativeMargin = 0.03
        /// The least tonal score announced, and how far above the best the impostor bank's tonal
        /// music and beeps reach: the bank is minutes of generated sound, not hours of a home's,
        /// and real streets and radios match a template better than it does.
        public static let tonalBaseThreshold = 0.7
        public static let tonalBankMargin = 0.1

        /// A sound from its enrollment recordings (clips cut to the sound, `EnrollmentClip`),
        /// its threshold set for the false-alarm rate of the bank — at the best any of its
        /// prints scores on hours of audio that is no one's sound — and above everything the
        /// user said it is not (room tone, rejected false alarms).
        public init(name: String, enrollments: [[Float]], negatives: [[Float]], embedding: SoundEmbedding) throws {
            guard !enrollments.isEmpty else { throw SoundsError.noRecording(sound: name) }
            var prints: [Float] = [], runBack: [Int] = []
            for clip in enrollments {
                let more = Self.prints(of: clip, embedding: embedding)
                runBack += (0..<(more.count / embedding.size))
                prints += more
            }
            let templates = enrollments.compactMap(TonalTemplate.init(clip:))
            var sound = Sound(name: name, prints: prints, runBack: runBack, threshold: 0, templates: templates)
            var threshold = max(Self.baseThreshold, Self.best(prints, against: embedding.bank, size: embedding.size) + Self.bankMargin)
            var tonalThreshold = Self.tonalBaseThreshold
            if !templates.isEmpty {
                let bank = TonalScorer.best(of: templates, over: ImpostorBank.tonalFrames)
                tonalThreshold = max(tonalThreshold, bank + Self.tonalBankMargin)
            }
            for negative in negatives {
                let (_, scores) = SoundDetector.scores(of: negative, sounds: [sound], embedding: embedding)
                threshold = max(threshold, (scores[0].max() ?? 0) + Self.negativeMargin)
                if !templates.isEmpty {
                    let heard = TonalPicture.frames(of: negative, tracksFloor: true)
                    tonalThreshold = max(tonalThreshold, TonalScorer.best(of: templates, over: heard) + Self.negativeMargin)
                }
            }
            sound.threshold = min(threshold, Self.highestThreshold)
            sound.tonalThreshold = min(tonalThreshold, Self.highestThreshold)
            if !templates.isEmpty {
                for negative in negatives {
                    let nearest = SoundDetector.agreementMargins(of: negative, sound: sound, embedding: embedding).max() ?? -1
                    sound.agreement = max(0, min(sound.agreement, -nearest - Self.negativeMargin))
                }
            }
            self = sound
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
            // the clip until half a second before its end, 100 ms apart as the stream's are (a
            // long sound's are spread, and a run along them is a faster one: rare).
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
            for j in 0..<(heard.count / size) {
                for i in 0..<(prints.count / size) {
                    var dot: Float = 0
                    for k in 0..<size { dot += prints[i * size + k] * heard[j * size + k] }
                    best = max(best, dot)
                }
            }
            return Double(best)
        }
    }

    /// One sound's run score as embeddings arrive: the last `run` rows of cosines with its
    /// prints, kept in a ring made once.
    struct RunScorer {
        let prints: [Float], runBack: [Int], size: Int, length: Int
        private var rows: [Float]
        private var newest = -1, filled = 0

        init(_ sound: Sound, size: Int) {
            prints = sound.prints
            runBack = sound.runBack
            self.size = size
            // A run no longer than the shortest recording's prints.
            var shortest = Int.max, current = 0
            for (j, back) in runBack.enumerated() {
                current = back + 1
                if j + 1 == runBack.count || runBack[j + 1] == 0 { shortest = min(shortest, current) }
            }
            length = max(1, min(SoundDetector.run, shortest))
            rows = [Float](repeating: 0, count: length * runBack.count)
        }

        /// The run score once `length` embeddings have arrived; −1 before.
        mutating func push(_ embedding: UnsafePointer<Float>) -> Float {
            let count = runBack.count
            newest = (newest + 1) % length
            filled = min(filled + 1, length)
            for i in 0..<count {
                var dot: Float = 0
                for k in 0..<size { dot += prints[i * size + k] * embedding[k] }
                rows[newest * count + i] = dot
            }
            guard filled == length else { return -1 }
            var best: Float = -1
            for j in 0..<count where runBack[j] >= length - 1 {
                var sum: Float = 0
                for d in 0..<length { sum += rows[((newest - d + length) % length) * count + j - d] }
                best = max(best, sum / Float(length))
            }
            return best
        }
    }

    /// Which of the two ways listen: both (the default), or one alone, to compare.
    public enum Matching: Sendable { case both, embedding, tonal }

    private struct Tracking {
        let sound: Sound
        var scorer: RunScorer
        var tonal: [TonalScorer]
        /// The best tonal score since the last check.
        var tonalBest: Float = 0
        var event: SoundEvent
    }

    private let stream: EmbeddingStream
    private let picture = TonalPicture(tracksFloor: true)
    private let size: Int
    public let embedding: SoundEmbedding
    public let matching: Matching
    private var tracking: [Tracking]
    public let sounds: [Sound]
    /// Samples heard before the block being pushed, and of it given to the tonal picture.
    private var blockStart = 0, pictured = 0
    /// Below its threshold by this much, an event is over.
    static let release = 0.05
    /// Within this much of both thresholds at once, a sound is announced.
    public static let agreement = 0.15
    /// Hears each check's two scores (of a single sound), for calibration.
    private var observe: ((Double, Double) -> Void)?

    public init(sounds: [Sound], embedding: SoundEmbedding, matching: Matching = .both) {
        self.sounds = sounds
        self.embedding = embedding
        self.matching = matching
        stream = EmbeddingStream(embedding)
        size = embedding.size
        tracking = sounds.map { sound in
            Tracking(sound: sound, scorer: RunScorer(sound, size: embedding.size),
                     tonal: matching == .embedding ? [] : sound.templates.map(TonalScorer.init), event: SoundEvent(sound: sound.name))
        }
    }

    /// Feeds 16 kHz samples; returns the detections that ended in them. `began` hears each
    /// one as it is announced (its end and score so far), for whoever cannot wait for the end.
    public func push(_ samples: ArraySlice<Float>, began: (SoundDetection) -> Void = { _ in }) -> [SoundDetection] {
        var ended: [SoundDetection] = []
        samples.withUnsafeBufferPointer { buffer in
            stream.push(buffer) { now, embedding in
                // The tonal frames finished by now, whatever the block size.
                picture(buffer, upTo: Int((now * TonalPicture.sampleRate).rounded()) - blockStart)
                embedding.withUnsafeBufferPointer { e in
                    for index in tracking.indices {
                        let run = Double(tracking[index].scorer.push(e.baseAddress!))
                        let tonal = Double(tracking[index].tonalBest)
                        tracking[index].tonalBest = 0
                        let sound = tracking[index].sound
                        // How far over its threshold the better of the two is.
                        var over = -Double.infinity, score = 0.0
                        if matching != .tonal, run - sound.threshold > over { (over, score) = (run - sound.threshold, run) }
                        if !tracking[index].tonal.isEmpty, tonal - sound.tonalThreshold > over { (over, score) = (tonal - sound.tonalThreshold, tonal) }
                        // Both close at once: two kinds of evidence agreeing are as sure as one alone.
                        if matching == .both, !tracking[index].tonal.isEmpty,
                           run - sound.threshold >= -sound.agreement, tonal - sound.tonalThreshold >= -sound.agreement {
                            over = max(over, 0)
                        }
                        observe?(run, tonal)
                        if let done = tracking[index].event.update(over, threshold: 0, hold: -Self.release, now: now, shown: score, began: began) {
                            ended.append(done)
                        }
                    }
                }
            }
            picture(buffer, upTo: buffer.count)
        }
        blockStart += samples.count
        return ended
    }

    /// Gives the tonal picture the block's samples up to `end`; each sound keeps its best score.
    private func picture(_ buffer: UnsafeBufferPointer<Float>, upTo end: Int) {
        let from = pictured - blockStart, to = min(buffer.count, end)
        guard to > from, tracking.contains(where: { !$0.tonal.isEmpty }) else {
            pictured = max(pictured, blockStart + to)
            return
        }
        picture.push(UnsafeBufferPointer(rebasing: buffer[from..<to])) { frame in
            for index in tracking.indices {
                for t in tracking[index].tonal.indices {
                    tracking[index].tonalBest = max(tracking[index].tonalBest, tracking[index].tonal[t].push(frame))
                }
            }
        }
        pictured = blockStart + to
    }

    /// Ends what is still sounding at the end of the stream.
    public func finish() -> [SoundDetection] {
        tracking.indices.compactMap { tracking[$0].event.finish() }
    }

    /// How near both of a sound's thresholds its two matchers came together at each check over a
    /// recording: the lesser of the two margins.
    static func agreementMargins(of samples: [Float], sound: Sound, embedding: SoundEmbedding) -> [Double] {
        let detector = SoundDetector(sounds: [sound], embedding: embedding)
        var margins: [Double] = []
        detector.observe = { run, tonal in margins.append(min(run - sound.threshold, tonal - sound.tonalThreshold)) }
        _ = detector.push(samples[...])
        return margins
    }

    /// Each sound's run score over a whole recording, one every 100 ms, with the time each
    /// window ends.
    public static func scores(of samples: [Float], sounds: [Sound], embedding: SoundEmbedding) -> (times: [Double], scores: [[Double]]) {
        let heard = embedding.embeddings(of: samples), size = embedding.size
        let count = heard.count / size
        let times = (0..<count).map { Double((embedding.windowFrames + $0 * SoundEmbedding.stride) * AlertFeatures.hop) / AlertFeatures.sampleRate }
        let scores = sounds.map { sound in
            var scorer = RunScorer(sound, size: size)
            return heard.withUnsafeBufferPointer { h in (0..<count).map { Double(scorer.push(h.baseAddress! + $0 * size)) } }
        }
        return (times, scores)
    }
}
