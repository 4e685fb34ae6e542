import EarshotCore
import Foundation

/// Why a recording cannot be enrolled as the user's own sound, or a sound cannot be listened for.
/// `source` names the recording.
public enum SoundsError: EarshotFailure, Equatable {
    case tooShort(source: String, seconds: Double)
    case digitalSilence(source: String)
    case silent(source: String, peakDBFS: Double)
    case clipped(source: String, share: Double)
    case noDistinctSound(source: String, contrastDB: Double?)
    case soundTooShort(source: String, seconds: Double)
    case roomToneTooShort(source: String, seconds: Double)
    case roomToneClipped(source: String)
    case noRecording(sound: String)
    /// A false alarm to reject, longer than one.
    case rejectionTooLong(source: String)

    public var description: String {
        switch self {
        case .tooShort(let source, let seconds):
            String(format: "%@: too short (%.2f s): record at least a second with the whole sound in it", source, seconds)
        case .digitalSilence(let source): "\(source): silent (digital silence): check that the microphone is on and not muted"
        case .silent(let source, let peak):
            String(format: "%@: silent (the loudest moment is %.0f dBFS): check the microphone and record closer to the sound", source, peak)
        case .clipped(let source, let share):
            String(format: "%@: clipped (%.1f %% of the samples at full scale): record further away or with less input gain", source, share * 100)
        case .noDistinctSound(let source, let contrast?):
            String(format: "%@: holds no distinct sound (its loudest moments are only %.0f dB above its quietest, and nothing tonal): record in a quieter moment, with a second of quiet before the sound", source, contrast)
        case .noDistinctSound(let source, nil): "\(source): holds no distinct sound"
        case .soundTooShort(let source, let seconds): String(format: "%@: the sound lasts only %.2f s, too short to recognise", source, seconds)
        case .roomToneTooShort(let source, let seconds): String(format: "%@: too short for room tone (%.2f s): record at least a second", source, seconds)
        case .roomToneClipped(let source): "\(source): clipped: room tone should be the quiet of the place, recorded at the same level as the sound"
        case .noRecording(let sound): "'\(sound)' has no recording to listen for"
        case .rejectionTooLong(let source): "\(source): longer than 30 s: cut it to the false alarm"
        }
    }
}
