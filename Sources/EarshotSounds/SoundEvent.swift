/// One enrolled sound's event as its score moves, whichever matcher scores it: announced when
/// the score reaches the threshold, held while it stays at or above the matcher's hold level,
/// over 0.3 s after it last did.
struct SoundEvent {
    let sound: String
    private var active: (start: Double, peak: Double, last: Double)?

    init(sound: String) { self.sound = sound }

    /// The score at `now` (seconds from the stream's start); `began` hears the announcement.
    /// `shown` is the score a detection carries, when it is not the one decided on (a margin
    /// over one of two thresholds). Returns the detection that ended, if one did.
    mutating func update(_ score: Double, threshold: Double, hold: Double, now: Double, shown: Double? = nil,
                         began: (SoundDetection) -> Void) -> SoundDetection? {
        let shown = shown ?? score
        guard var current = active else {
            if score >= threshold {
                active = (now, shown, now)
                began(SoundDetection(sound: sound, start: now, end: now, score: shown))
            }
            return nil
        }
        if score >= hold {
            current.last = now
            current.peak = max(current.peak, shown)
            active = current
        } else if now - current.last > 0.3 {
            active = nil
            return SoundDetection(sound: sound, start: current.start, end: current.last, score: current.peak)
        }
        return nil
    }

    /// The event still sounding at the end of the stream, if any; the tracker starts afresh.
    mutating func finish() -> SoundDetection? {
        defer { active = nil }
        return active.map { SoundDetection(sound: sound, start: $0.start, end: $0.last, score: $0.peak) }
    }
}
