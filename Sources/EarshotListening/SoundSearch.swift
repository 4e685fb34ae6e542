import EarshotCore
import EarshotHub
import EarshotSounds
import Foundation

/// The enrolled sounds looked for in a whole recording, by any of the matchers, and the
/// store's enrollments and rejections made from recordings.
public enum SoundSearch {
    public enum Method: String, CaseIterable, Sendable {
        /// The learned sound matcher and the tonal templates together, as `watch` listens.
        case combined
        /// The learned sound matcher alone.
        case embedding
        /// The tonal templates alone.
        case template
        /// Time-consistent tonal landmarks.
        case landmarks
        /// The original two-strongest-peaks method.
        case peaks
    }

    /// Every detection in `samples` (at the matchers' rate), in order of announcement;
    /// `threshold` replaces each sound's calibrated one (both of them, for `combined`).
    public static func find(in samples: [Float], store: SoundStore, method: Method, threshold: Double?) throws -> [SoundDetection] {
        let found: [SoundDetection]
        switch method {
        case .peaks:
            found = PeakMatcher.detect(samples, matchers: try store.loadPeakMatchers(), sampleRate: LandmarkAnalyzer.sampleRate)
        case .landmarks:
            let detector = LandmarkDetector(sounds: try store.loadLandmarkSounds(threshold: threshold))
            found = blocks(of: samples).flatMap { detector.push($0) } + detector.finish()
        case .combined, .embedding, .template:
            let embedding = try SoundEmbedding.bundled()
            let matching: SoundDetector.Matching = method == .combined ? .both : method == .embedding ? .embedding : .tonal
            let detector = SoundDetector(sounds: try store.loadSounds(threshold: threshold, embedding: embedding), embedding: embedding, matching: matching)
            found = blocks(of: samples).flatMap { detector.push($0) } + detector.finish()
        }
        return found.sorted { $0.start < $1.start }
    }

    /// Every sound's score every 100 ms, for tuning, as CSV: time, then one column per sound;
    /// and a line per sound with its threshold.
    public static func scoreTable(of samples: [Float], store: SoundStore, threshold: Double?) throws -> (csv: String, sounds: [String]) {
        let embedding = try SoundEmbedding.bundled()
        let sounds = try store.loadSounds(threshold: threshold, embedding: embedding)
        let (times, columns) = SoundDetector.scores(of: samples, sounds: sounds, embedding: embedding)
        var lines = ["time," + sounds.map(\.name).joined(separator: ",")]
        for (i, time) in times.enumerated() {
            lines.append(String(format: "%.2f", time) + "," + columns.map { String(format: "%.3f", $0[i]) }.joined(separator: ","))
        }
        let notes = sounds.map {
            String(format: "%@: threshold %.3f, %d prints; tonal threshold %.3f, %d templates", $0.name, $0.threshold,
                   $0.prints.count / embedding.size, $0.tonalThreshold, $0.templates.count)
        }
        return (lines.joined(separator: "\n"), notes)
    }

    /// 100 ms at a time, as a live stream would come.
    private static func blocks(of samples: [Float]) -> [ArraySlice<Float>] {
        stride(from: 0, to: samples.count, by: 1600).map { samples[$0..<min(samples.count, $0 + 1600)] }
    }
}

extension SoundStore {
    /// Enrolls `name` from recordings of it (any format, rate and channels), with a recording
    /// of the place without it as evidence of what it is not; returns the clips as measured.
    @discardableResult
    public func enroll(_ name: String, recordings: [String], roomTone: String?) throws -> [EnrollmentClip] {
        let clips = try recordings.map { try EnrollmentClip(path: $0) }
        var stored = zip(recordings, clips).map { path, clip in Clip(role: .enrollment, source: (path as NSString).lastPathComponent, samples: clip.samples) }
        if let roomTone {
            stored.append(Clip(role: .roomTone, source: (roomTone as NSString).lastPathComponent, samples: try RoomTone(path: roomTone).samples))
        }
        try enroll(name, clips: stored)
        return clips
    }

    /// Not my doorbell: keeps a recording (up to 30 s) of what set `name` off, so its threshold
    /// rises above what that scores. Returns the threshold before and after.
    public func reject(_ path: String, for name: String) throws -> (before: Double, after: Double) {
        let samples = try MatchingAudio(path: path).samples
        guard !samples.isEmpty else { throw EarshotError.emptyAudio(path: path) }
        guard Double(samples.count) <= 30 * LandmarkAnalyzer.sampleRate else { throw SoundsError.rejectionTooLong(source: path) }
        let embedding = try SoundEmbedding.bundled()
        let before = try loadSounds(threshold: nil, embedding: embedding).first { $0.name == name }
        try add(Clip(role: .rejected, source: (path as NSString).lastPathComponent, samples: samples), to: name)
        let after = try loadSounds(threshold: nil, embedding: embedding).first { $0.name == name }
        return (before?.threshold ?? 0, after?.threshold ?? 0)
    }
}
