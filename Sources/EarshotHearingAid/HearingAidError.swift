import EarshotAudiometry
import EarshotCore

/// What a fitting or the alert probe cannot be made with.
public enum HearingAidError: EarshotFailure, Equatable {
    case maximumOutput(dBSPL: Double)
    case notCalibrated(profile: String, ear: Ear)
    case trackLengths(alerts: Int, mix: Int)

    public var description: String {
        switch self {
        case .maximumOutput(let level): "the maximum output must be 60–140 dB SPL, not \(level)"
        case .notCalibrated(let profile, let ear): "calibration '\(profile)' has no measurement for the \(ear.rawValue) ear"
        case .trackLengths(let alerts, let mix): "the alert track has \(alerts) samples, the mix \(mix): they must match"
        }
    }
}
