/// The alert sounds Earshot must never lose.
public enum AlertClass: String, CaseIterable, Codable, Sendable {
    case siren
    case smokeAlarm = "smoke_alarm"
    case carHorn = "car_horn"
    case doorbell
}
