import EarshotCore

/// What a scene cannot be generated with.
public enum SynthesisError: EarshotFailure, Equatable {
    case duration(seconds: Double)
    case alertsPerMinute(Double)

    public var description: String {
        switch self {
        case .duration(let seconds): "a scene lasts 1–3600 s, not \(seconds)"
        case .alertsPerMinute(let rate): "alerts per minute must be 0 or more, not \(rate)"
        }
    }
}
