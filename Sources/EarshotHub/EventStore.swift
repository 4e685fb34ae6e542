import EarshotCore
import EarshotHubClient
import Foundation
import GRDB

/// Events kept in the hub's database, whose commits are on the disk before they return: an
/// event `append` has stored survives a killed process and a power cut alike.
public final class EventStore: Sendable {
    private let pool: DatabasePool
    public var path: String { database.path }
    public let database: HubDatabase

    public init(database: HubDatabase) {
        self.database = database
        pool = database.pool
    }

    /// Stores the event durably and returns it with its id; a key seen before returns the event
    /// stored then, and `isNew` false. It is marked quiet if it arrives while the settings
    /// say so (read in the same transaction).
    public func append(_ event: EventSubmission, timeZone: TimeZone = .current) async throws -> (event: StoredEvent, isNew: Bool) {
        try await pool.write { db in
            if let key = event.key, let row = try Row.fetchOne(db, sql: "SELECT * FROM event WHERE key = ?", arguments: [key]) {
                return (Self.event(row), false)
            }
            let now = Date()
            let quiet = try Self.settings(db).isQuiet(event.kind, at: now, in: timeZone)
            try db.execute(
                sql: "INSERT INTO event (kind, label, time, confidence, source, key, received, quiet) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                arguments: [event.kind.rawValue, event.label, event.time, event.confidence, event.source, event.key, now.timeIntervalSince1970, quiet])
            let id = db.lastInsertedRowID
            return (StoredEvent(id: id, kind: event.kind, label: event.label, time: StoredEvent.iso8601(event.time),
                                confidence: event.confidence, source: event.source, quiet: quiet), true)
        }
    }

    public func settings() async throws -> HubSettings {
        try await pool.read { db in try Self.settings(db) }
    }

    /// Reads the settings, changes them with `change` and stores the result, in one transaction.
    public func updateSettings(_ change: @Sendable @escaping (HubSettings) throws -> HubSettings) async throws -> HubSettings {
        try await pool.write { db in
            let settings = try change(try Self.settings(db))
            let encoder = JSONEncoder()
            for (name, value) in [("snoozeUntil", settings.snoozeUntil.map { String($0) }),
                                  ("quietHours", try settings.quietHours.map { String(decoding: try encoder.encode($0), as: UTF8.self) })] {
                try db.execute(sql: "INSERT OR REPLACE INTO setting (name, value) VALUES (?, ?)", arguments: [name, value])
            }
            return settings
        }
    }

    private static func settings(_ db: Database) throws -> HubSettings {
        var values: [String: String] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT name, value FROM setting") { values[row["name"]] = row["value"] }
        return HubSettings(snoozeUntil: values["snoozeUntil"].flatMap(Double.init),
                           quietHours: values["quietHours"].flatMap { try? JSONDecoder().decode(QuietHours.self, from: Data($0.utf8)) })
    }

    /// Events after `since`, ascending, at most `limit`.
    public func events(after since: Int64, limit: Int) async throws -> [StoredEvent] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM event WHERE id > ? ORDER BY id LIMIT ?", arguments: [since, limit]).map(Self.event)
        }
    }

    /// The newest event's id; 0 when there is none.
    public func latestID() async throws -> Int64 {
        try await pool.read { db in try Int64.fetchOne(db, sql: "SELECT MAX(id) FROM event") ?? 0 }
    }

    /// Events received at or after `time` (unix seconds), ascending, at most `limit`.
    public func events(receivedSince time: Double, limit: Int) async throws -> [StoredEvent] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM event WHERE received >= ? ORDER BY id LIMIT ?", arguments: [time, limit]).map(Self.event)
        }
    }

    /// An event's kind, label and the key its producer gave it; nil when there is no such id.
    public func origin(of id: Int64) async throws -> (kind: EventKind, label: String, key: String?)? {
        try await pool.read { db in
            try Row.fetchOne(db, sql: "SELECT kind, label, key FROM event WHERE id = ?", arguments: [id]).map {
                (EventKind(rawValue: $0["kind"]) ?? .test, $0["label"], $0["key"])
            }
        }
    }

    /// The sound events whose recording is still kept (`SoundStore.keepHeard`): those a person
    /// can answer "not my doorbell" to.
    public func rejectable() async throws -> [Int64] {
        try await pool.read { db in
            try Int64.fetchAll(db, sql: "SELECT event.id FROM event JOIN heard ON heard.key = event.key WHERE event.kind = 'sound' ORDER BY event.id")
        }
    }

    private static func event(_ row: Row) -> StoredEvent {
        StoredEvent(id: row["id"], kind: EventKind(rawValue: row["kind"]) ?? .test, label: row["label"],
                    time: StoredEvent.iso8601(row["time"]), confidence: row["confidence"], source: row["source"], quiet: row["quiet"])
    }
}
