import EarshotHub
import EarshotSounds
import Foundation

/// The enrolled sounds, as each matcher listens for them, rebuilt from the recordings the store
/// keeps.
extension SoundStore {
    /// Every enrolled sound with its prints and threshold, ready to listen for.
    public func loadSounds(threshold: Double?, embedding: SoundEmbedding) throws -> [SoundDetector.Sound] {
        try summaries().map { summary in
            let clips = try clips(of: summary.name)
            var sound = try SoundDetector.Sound(
                name: summary.name, enrollments: clips.filter { $0.role == .enrollment }.map(\.samples),
                negatives: clips.filter { $0.role != .enrollment }.map(\.samples), embedding: embedding)
            if let threshold { (sound.threshold, sound.tonalThreshold) = (threshold, threshold) }
            return sound
        }
    }

    /// The enrolled sounds as the landmark method hears them; those with nothing tonal to hold
    /// on to are left out, with a note.
    public func loadLandmarkSounds(threshold: Double?, note: (String) -> Void = { _ in }) throws -> [LandmarkDetector.Sound] {
        try summaries().compactMap { summary in
            let clips = try clips(of: summary.name)
            do {
                var sound = try LandmarkDetector.Sound(
                    name: summary.name, enrollments: clips.filter { $0.role == .enrollment }.map(\.samples),
                    negatives: clips.filter { $0.role != .enrollment }.map(\.samples))
                if let threshold { sound.threshold = threshold }
                return sound
            } catch let error as SoundMatchError {
                note("\(error.description): the landmark method leaves it out")
                return nil
            }
        }
    }

    /// The original peak method's matchers, one per enrollment recording.
    public func loadPeakMatchers() throws -> [PeakMatcher] {
        try summaries().flatMap { summary in
            try clips(of: summary.name).filter { $0.role == .enrollment }.map { PeakMatcher(name: summary.name, reference: $0.samples) }
        }
    }
}
