import EarshotCore

/// The alert sounds Earshot must never lose.
public enum AlertClass: String, SnakeCaseValue, Codable, Sendable {
    case siren
    case smokeAlarm = "smoke_alarm"
    case carHorn = "car_horn"
    case doorbell

    public init?(rawValue: String) {
        guard let value = Self.named(rawValue) else { return nil }
        self = value
    }
}
