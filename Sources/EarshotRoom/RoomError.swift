import EarshotCore
import Foundation

/// What measuring, simulating, analysing or iterating a room can refuse.
public enum RoomError: EarshotFailure, Equatable {
    case sweepRange(startHz: Double, endHz: Double, nyquistHz: Double)
    case sweepDuration(seconds: Double)
    case sweepAmplitude
    case recordingShorterThanSweep(recordingFrames: Int, sweepFrames: Int)
    case silentSource
    case emptyResponse
    case silentResponse
    case noGeneration
    case generationTooLong(generation: Int, frames: Int, maximumFrames: Int)
    /// A generation left unnormalised grows past what 32-bit samples hold.
    case generationOverflows(generation: Int)
    case dimensions(width: Double, depth: Double, height: Double)
    case absorption(Double)
    case rt60OutOfRange(seconds: Double)
    case tooDry(width: Double, depth: Double, height: Double, rt60: Double)
    case tooLive(width: Double, depth: Double, height: Double, rt60: Double)
    case outsideRoom(width: Double, depth: Double, height: Double)
    case responseTooLong(seconds: Double)
    case reflectionOrder(Int)
    /// More image sources than are simulated: a larger room, a shorter RT60 or duration, or a
    /// lower reflection order.
    case tooManyImages(count: Double, maximum: Double)
    case highPass(hz: Double)
    case silentImpulseResponse

    public var description: String {
        switch self {
        case .sweepRange(let start, let end, let nyquist):
            "the sweep must run from above 0 Hz to below Nyquist (\(Int(nyquist)) Hz) over at least an octave, not \(start)–\(end) Hz"
        case .sweepDuration(let seconds): "the sweep must last 0.1–120 s, not \(seconds)"
        case .sweepAmplitude: "sweep amplitude must be in (0, 1]"
        case .recordingShorterThanSweep(let recording, let sweep):
            "the recording (\(recording) frames) must be longer than the sweep (\(sweep) frames): it must hold the sweep and the room's tail"
        case .silentSource: "the source has no samples"
        case .emptyResponse: "the impulse response has no samples"
        case .silentResponse: "the impulse response is silent: every generation would be silence"
        case .noGeneration: "the number of generations must be at least 1"
        case .generationTooLong(let generation, let frames, let maximum):
            "generation \(generation) would be \(frames) frames long, more than the \(maximum) one transform can hold; use fewer generations or a shorter response"
        case .generationOverflows(let generation): "generation \(generation) grows beyond the range of 32-bit samples; normalise it"
        case .dimensions(let w, let d, let h): "room dimensions must be between 0 and 1000 m, not \(w)x\(d)x\(h)"
        case .absorption(let a): "wall absorption must be in (0, 1], not \(a)"
        case .rt60OutOfRange(let rt60): "RT60 must be between 0 and 20 s, not \(rt60)"
        case .tooDry(let w, let d, let h, let rt60): "a \(w)x\(d)x\(h) m room cannot be as dry as RT60 \(rt60) s"
        case .tooLive(let w, let d, let h, let rt60): "a \(w)x\(d)x\(h) m room cannot reverberate as long as \(rt60) s"
        case .outsideRoom(let w, let d, let h): "source and microphone must be inside the \(w)x\(d)x\(h) m room"
        case .responseTooLong(let seconds): "the response would last \(seconds) s; at most 60 s is simulated"
        case .reflectionOrder(let order): "the reflection order must be 0–200, not \(order)"
        case .tooManyImages(let count, let maximum):
            String(format: "this room needs about %.1e image sources (at most %.0e): use a larger room, a shorter RT60 or duration, or a lower reflection order", count, maximum)
        case .highPass(let hz): "the high-pass must lie between 0 Hz and Nyquist, not \(hz) Hz"
        case .silentImpulseResponse: "the impulse response is silent"
        }
    }
}
