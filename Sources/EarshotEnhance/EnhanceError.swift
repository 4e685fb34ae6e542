import EarshotCore

/// What the suppressor and the compressor cannot be set up with.
public enum EnhanceError: EarshotFailure, Equatable {
    case strength(dB: Double)
    case trainingSeconds(Double)
    case noBands
    case bandOrder
    case knees(centreHz: Double)
    case timing
    case limit(dBFS: Double)
    case limiterSplit(hz: Double)

    public var description: String {
        switch self {
        case .strength(let dB): "strength must be 0–40 dB of attenuation, not \(dB)"
        case .trainingSeconds(let seconds): "noise training must last 0–10 s, not \(seconds)"
        case .noBands: "a compressor needs at least one band per channel"
        case .bandOrder: "compressor bands must have ascending, positive centre frequencies"
        case .knees(let hz): "the \(Int(hz)) Hz band needs finite knees at ascending levels"
        case .timing: "the compressor needs a finite calibration and positive attack and release times"
        case .limit(let dBFS): "the output limit must be at most 0 dBFS, not \(dBFS)"
        case .limiterSplit(let hz): "the limiter's split must be a positive frequency, not \(hz) Hz"
        }
    }
}
