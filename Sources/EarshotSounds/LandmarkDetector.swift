import Foundation

/// Listens for enrolled sounds by their tonal landmarks (`--method landmarks`, kept to compare
/// against `SoundDetector`), in 16 kHz audio, block by block: landmarks every 10 ms, each
/// sound's templates scored against the recent frames, an announcement when the best score
/// crosses the sound's threshold, the event held while it stays above 80 % of it (and 0.3 s
/// after).
public final class LandmarkDetector {
    public struct Sound: Sendable {
        public var name: String
        public var templates: [SoundTemplate]
        public var threshold: Double
        public init(name: String, templates: [SoundTemplate], threshold: Double) {
            self.name = name
            self.templates = templates
            self.threshold = threshold
        }

        /// The least score announced, whatever the evidence.
        public static let baseThreshold = 0.58
        public static let highestThreshold = 0.95

        /// A sound from its enrollment recordings, with its threshold set above what it is not:
        /// the generic tonal material of `ImpostorBank` (music, beeps), then everything the
        /// user said it is not (room tone, rejected false alarms).
        public init(name: String, enrollments: [[Float]], negatives: [[Float]]) throws {
            let templates = try enrollments.map { try SoundTemplate(name: name, clip: $0) }
            var threshold = max(Self.baseThreshold, Self.impostorThreshold(templates))
            for negative in negatives {
                threshold = max(threshold, (LandmarkDetector.scores(of: negative, templates: templates).max() ?? 0) + 0.05)
            }
            self.init(name: name, templates: templates, threshold: min(threshold, Self.highestThreshold))
        }

        /// Just above the best score the templates reach on the impostor bank: a sound that
        /// music finds by chance is announced only when it matches better than music ever did.
        public static func impostorThreshold(_ templates: [SoundTemplate]) -> Double {
            (LandmarkDetector.scores(frames: ImpostorBank.frames, templates: templates).max() ?? 0) + 0.02
        }
    }

    private struct Tracking {
        let sound: Sound
        let scorers: [LandmarkScorer]
        var event: SoundEvent
    }

    private let analyzer = LandmarkAnalyzer()
    private var tracking: [Tracking]
    private var frames: [UInt64] = []
    private var frameCount = 0
    private let longest: Int

    public let sounds: [Sound]

    public init(sounds: [Sound]) {
        self.sounds = sounds
        tracking = sounds.map { Tracking(sound: $0, scorers: $0.templates.map(LandmarkScorer.init), event: SoundEvent(sound: $0.name)) }
        longest = sounds.flatMap(\.templates).map(\.frames.count).max() ?? 1
    }

    /// Feeds 16 kHz samples; returns the detections that ended in them. `began` hears each
    /// one as it is announced (its end and score so far), for whoever cannot wait for the end.
    public func push(_ samples: ArraySlice<Float>, began: (SoundDetection) -> Void = { _ in }) -> [SoundDetection] {
        var ended: [SoundDetection] = []
        for marks in analyzer.push(samples) {
            frames.append(marks)
            frameCount += 1
            if frames.count > 4 * longest + 8 { frames.removeFirst(frames.count - (longest + 4)) }
            let now = Double(frameCount) * Double(LandmarkAnalyzer.hop) / LandmarkAnalyzer.sampleRate
            for index in tracking.indices {
                let score = tracking[index].scorers.map { $0.score(frames[...]) }.max() ?? 0
                let threshold = tracking[index].sound.threshold
                if let done = tracking[index].event.update(score, threshold: threshold, hold: 0.8 * threshold, now: now, began: began) {
                    ended.append(done)
                }
            }
        }
        return ended
    }

    /// Ends what is still sounding at the end of the stream.
    public func finish() -> [SoundDetection] {
        tracking.indices.compactMap { tracking[$0].event.finish() }
    }

    /// The best score of each sound over a whole recording, frame by frame (for calibration).
    public static func scores(of samples: [Float], templates: [SoundTemplate]) -> [Double] {
        scores(frames: LandmarkAnalyzer.landmarks(of: samples), templates: templates)
    }

    public static func scores(frames: [UInt64], templates: [SoundTemplate]) -> [Double] {
        let scorers = templates.map(LandmarkScorer.init)
        return frames.indices.map { end in scorers.map { $0.score(frames[...end]) }.max() ?? 0 }
    }
}
