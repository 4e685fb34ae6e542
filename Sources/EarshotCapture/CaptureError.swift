import EarshotCore
import Foundation

/// What the sound check and the echo canceller refuse.
public enum CaptureError: EarshotFailure, Equatable {
    case soundCheckTooShort(seconds: Double)
    case soundCheckTooLong(seconds: Double?, longest: Double)
    case notANumber(sample: Int)
    case echoChannels(Int)
    case echoRate(Double)
    /// A microphone recording at a rate the echo canceller does not run at.
    case echoRecordingRate(path: String, rate: Double)

    public var description: String {
        switch self {
        case .soundCheckTooShort(let seconds): "a sound check needs at least 1 s of audio, not \(String(format: "%.2f", seconds)) s"
        case .soundCheckTooLong(let seconds?, let longest):
            "a sound check takes at most \(Int(longest)) s of audio; the recording is \(Int(seconds)) s: cut it first"
        case .soundCheckTooLong(nil, let longest): "a sound check takes at most \(Int(longest)) s of audio; cut the recording first"
        case .notANumber(let sample): "sample \(sample) is not a number (NaN or infinite)"
        case .echoChannels(let count): "echo cancellation needs two channels (microphone, far end), not \(count)"
        case .echoRate(let rate): "echo cancellation runs at 8 to 48 kHz, not \(rate) Hz"
        case .echoRecordingRate(let path, let rate): "echo cancellation runs at 8 to 48 kHz; convert \(path) first (it is \(Int(rate)) Hz)"
        }
    }
}
