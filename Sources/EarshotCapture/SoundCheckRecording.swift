import EarshotCore
import EarshotIO

extension SoundCheck {
    /// The check of a recording file, as `earshot soundcheck FILE` and the dashboard's sound-check
    /// page both make it: read at its own rate by libsndfile, mixed to mono, the room tone found
    /// in its quietest moments. One path, so the page and the command line give one verdict.
    public init(recordingAt path: String) throws {
        // Refuse an over-long recording before reading it all into memory.
        let duration = try AudioFileReader(path: path).info.durationSeconds
        guard duration <= Self.longestSeconds else {
            throw CaptureError.soundCheckTooLong(seconds: duration, longest: Self.longestSeconds)
        }
        let recording = try MonoRecording(path: path)
        try self.init(recording.samples, sampleRate: recording.info.sampleRate)
    }
}
