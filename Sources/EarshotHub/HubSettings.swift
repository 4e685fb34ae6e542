import EarshotHubClient
import Foundation

/// Times of day, in the hub's local time, when sounds should not disturb: "22:00"–"07:00" runs
/// across midnight.
public struct QuietHours: Codable, Equatable, Sendable {
    /// Minutes after midnight.
    public var start: Int
    public var end: Int

    public init(start: Int, end: Int) {
        self.start = start
        self.end = end
    }

    /// Parses "HH:MM" for both ends; they must differ.
    public init(start: String, end: String) throws(HubRequestError) {
        func minutes(_ text: String, _ name: String) throws(HubRequestError) -> Int {
            let parts = text.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count == 2, parts.allSatisfy({ $0.count == 2 }), let hours = Int(parts[0]), let minutes = Int(parts[1]),
                  (0..<24).contains(hours), (0..<60).contains(minutes) else {
                throw .init("'quietHours.\(name)' must be a time of day as HH:MM, not '\(text)'")
            }
            return hours * 60 + minutes
        }
        self.start = try minutes(start, "start")
        self.end = try minutes(end, "end")
        guard self.start != self.end else { throw .init("quiet hours must not start and end at the same time") }
    }

    public func contains(minuteOfDay minute: Int) -> Bool {
        start < end ? (start..<end).contains(minute) : minute >= start || minute < end
    }

    static func text(_ minutes: Int) -> String { String(format: "%02d:%02d", minutes / 60, minutes % 60) }

    enum CodingKeys: String, CodingKey { case start, end }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        try self.init(start: try container.decode(String.self, forKey: .start), end: try container.decode(String.self, forKey: .end))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(Self.text(start), forKey: .start)
        try container.encode(Self.text(end), forKey: .end)
    }
}

/// When the hub keeps quiet: a snooze until a moment, and daily quiet hours. Quiet applies to
/// sounds and tests, never to alerts: a smoke alarm at 3 am is what Earshot is for. An event
/// that arrives while quiet is stored and shown as usual, marked `quiet`: monitors raise no
/// notification for it and the ntfy stream gives it the lowest priority.
public struct HubSettings: Equatable, Sendable {
    /// Unix seconds.
    public var snoozeUntil: Double?
    public var quietHours: QuietHours?

    public init(snoozeUntil: Double? = nil, quietHours: QuietHours? = nil) {
        self.snoozeUntil = snoozeUntil
        self.quietHours = quietHours
    }

    public func isQuiet(_ kind: EventKind, at date: Date, in timeZone: TimeZone = .current) -> Bool {
        guard kind != .alert else { return false }
        if let snoozeUntil, date.timeIntervalSince1970 < snoozeUntil { return true }
        guard let quietHours else { return false }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let parts = calendar.dateComponents([.hour, .minute], from: date)
        return quietHours.contains(minuteOfDay: (parts.hour ?? 0) * 60 + (parts.minute ?? 0))
    }

    /// Applies a `PUT /api/settings` body: any of `snoozeMinutes` (0 ends a snooze),
    /// `snoozeUntil` (ISO 8601, unix seconds or null) and `quietHours` ({start, end} or null).
    public func updated(json data: Data, now: Date) throws(HubRequestError) -> HubSettings {
        guard let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else {
            throw .init("the body must be a JSON object with snoozeMinutes, snoozeUntil or quietHours")
        }
        let known: Set<String> = ["snoozeMinutes", "snoozeUntil", "quietHours"]
        if let unknown = object.keys.first(where: { !known.contains($0) }) { throw .init("unknown setting '\(unknown)'") }
        guard !object.isEmpty else { throw .init("nothing to change: send snoozeMinutes, snoozeUntil or quietHours") }
        var settings = self
        if let value = object["snoozeMinutes"] {
            guard let minutes = value as? NSNumber, String(cString: minutes.objCType) != "c", (0...10_080).contains(minutes.doubleValue) else {
                throw .init("'snoozeMinutes' must be a number of minutes from 0 to 10080 (a week)")
            }
            settings.snoozeUntil = minutes.doubleValue > 0 ? now.timeIntervalSince1970 + minutes.doubleValue * 60 : nil
        }
        if let value = object["snoozeUntil"] {
            if value is NSNull {
                settings.snoozeUntil = nil
            } else if let number = value as? NSNumber, String(cString: number.objCType) != "c", number.doubleValue.isFinite {
                settings.snoozeUntil = number.doubleValue
            } else if let text = value as? String, let date = EventSubmission.parseISO8601(text) {
                settings.snoozeUntil = date.timeIntervalSince1970
            } else {
                throw .init("'snoozeUntil' must be unix seconds, an ISO 8601 date-time or null")
            }
        }
        if let value = object["quietHours"] {
            if value is NSNull {
                settings.quietHours = nil
            } else if let hours = value as? [String: Any], let start = hours["start"] as? String, let end = hours["end"] as? String {
                settings.quietHours = try QuietHours(start: start, end: end)
            } else {
                throw .init("'quietHours' must be {\"start\":\"HH:MM\",\"end\":\"HH:MM\"} or null")
            }
        }
        return settings
    }

    /// As `GET /api/settings` answers.
    public func reply(now: Date, timeZone: TimeZone = .current) -> Reply {
        Reply(quietHours: quietHours, quietNow: isQuiet(.sound, at: now, in: timeZone),
              snoozeUntil: snoozeUntil.flatMap { $0 > now.timeIntervalSince1970 ? StoredEvent.iso8601($0) : nil }, timeZone: timeZone.identifier)
    }

    /// The settings as the dashboard shows them: the snooze as ISO 8601 (null when none or
    /// over), the quiet hours (null when none), whether sounds are quiet right now, and the hub's
    /// time zone. Every key is always there.
    public struct Reply: Codable, Equatable, Sendable {
        public var quietHours: QuietHours?
        public var quietNow: Bool
        public var snoozeUntil: String?
        public var timeZone: String

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(quietHours, forKey: .quietHours)
            try container.encode(quietNow, forKey: .quietNow)
            try container.encode(snoozeUntil, forKey: .snoozeUntil)
            try container.encode(timeZone, forKey: .timeZone)
        }
    }
}
