import EarshotCore
import EarshotHubClient
import Foundation
import GRDB

/// The user's enrolled sounds, in the hub's SQLite file: each with its recordings (the sound
/// itself, room tone, and false alarms the user rejected), kept as 16 kHz mono samples.
public final class SoundStore: Sendable {
    public enum Role: String, Codable, Sendable {
        case enrollment, roomTone = "room_tone", rejected
    }

    /// One recording as stored.
    public struct Clip: Equatable, Sendable {
        public var role: Role
        public var source: String
        public var samples: [Float]
        public init(role: Role, source: String, samples: [Float]) {
            self.role = role
            self.source = source
            self.samples = samples
        }
    }

    /// What `sounds list` and `/api/sounds` show.
    public struct Summary: Codable, Equatable, Sendable {
        public var name: String
        public var recordings: Int
        public var roomTone: Bool
        public var rejected: Int
        /// ISO 8601.
        public var enrolled: String
        /// The enrolled recordings' lengths, seconds.
        public var seconds: [Double]
    }

    public static let sampleRate = 16_000.0
    private let pool: DatabasePool

    public init(database: HubDatabase) {
        pool = database.pool
    }

    /// The sounds in the hub's database at `path`, for a command that has no hub at hand.
    public convenience init(path: String) throws {
        self.init(database: try HubDatabase(path: path))
    }

    /// `earshot sounds` names: what a person would call a sound, safe in MQTT topics and URLs.
    public static func validate(name: String) throws {
        guard (1...40).contains(name.count), name.allSatisfy({ ($0.isLetter && $0.isASCII) || $0.isNumber || $0 == "_" || $0 == "-" }) else {
            throw HubError.soundName(name)
        }
    }

    /// Stores a new sound with its clips, all or nothing; refuses a name already taken.
    public func enroll(_ name: String, clips: [Clip]) throws {
        try Self.validate(name: name)
        try pool.write { db in
            if try Bool.fetchOne(db, sql: "SELECT 1 FROM sound WHERE name = ?", arguments: [name]) == true {
                throw HubError.soundEnrolled(name)
            }
            let now = Date().timeIntervalSince1970
            try db.execute(sql: "INSERT INTO sound (name, enrolled) VALUES (?, ?)", arguments: [name, now])
            for clip in clips { try Self.insert(clip, for: name, at: now, db) }
        }
    }

    /// Adds a clip (a rejected false alarm, more room tone) to a sound.
    public func add(_ clip: Clip, to name: String) throws {
        try pool.write { db in
            guard try Bool.fetchOne(db, sql: "SELECT 1 FROM sound WHERE name = ?", arguments: [name]) == true else {
                throw HubError.noSuchSound(name)
            }
            try Self.insert(clip, for: name, at: Date().timeIntervalSince1970, db)
        }
    }

    /// Removes a sound and its recordings; false when there was none of that name.
    @discardableResult
    public func remove(_ name: String) throws -> Bool {
        try pool.write { db in
            try db.execute(sql: "DELETE FROM sound WHERE name = ?", arguments: [name])
            return db.changesCount > 0
        }
    }

    /// The enrolled sounds' names, in order.
    public func names() throws -> [String] {
        try pool.read { db in try String.fetchAll(db, sql: "SELECT name FROM sound ORDER BY name") }
    }

    public func summaries() throws -> [Summary] {
        try pool.read { db in
            try Row.fetchAll(db, sql: "SELECT name, enrolled FROM sound ORDER BY name").map { row in
                let name: String = row["name"]
                let clips = try Row.fetchAll(db, sql: "SELECT role, seconds FROM sound_clip WHERE sound = ? ORDER BY id", arguments: [name])
                let enrolled = clips.filter { $0["role"] as String == Role.enrollment.rawValue }
                return Summary(
                    name: name, recordings: enrolled.count, roomTone: clips.contains { $0["role"] as String == Role.roomTone.rawValue },
                    rejected: clips.filter { $0["role"] as String == Role.rejected.rawValue }.count,
                    enrolled: StoredEvent.iso8601(row["enrolled"]), seconds: enrolled.map { (($0["seconds"] as Double) * 100).rounded() / 100 })
            }
        }
    }

    /// A sound's recordings, in the order they were added.
    public func clips(of name: String) throws -> [Clip] {
        try pool.read { db in
            try Row.fetchAll(db, sql: "SELECT role, source, samples FROM sound_clip WHERE sound = ? ORDER BY id", arguments: [name]).map { row in
                let data: Data = row["samples"]
                let samples = data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
                return Clip(role: Role(rawValue: row["role"]) ?? .enrollment, source: row["source"], samples: samples)
            }
        }
    }

    /// How many heard recordings are kept: the latest, enough for a day's false alarms.
    public static let heardKept = 30

    /// Keeps what was heard when `sound` was announced (the event's `key`), for a later "not
    /// my doorbell"; the oldest beyond `heardKept` go.
    public func keepHeard(key: String, sound: String, samples: [Float], at time: Date = Date()) throws {
        let data = samples.withUnsafeBufferPointer { Data(buffer: $0) }
        try pool.write { db in
            try db.execute(sql: "INSERT OR REPLACE INTO heard (key, sound, time, samples) VALUES (?, ?, ?, ?)",
                           arguments: [key, sound, time.timeIntervalSince1970, data])
            try db.execute(sql: "DELETE FROM heard WHERE key NOT IN (SELECT key FROM heard ORDER BY time DESC LIMIT ?)", arguments: [Self.heardKept])
        }
    }

    /// Not my doorbell: the recording heard with the event `key` becomes a rejected clip of
    /// its sound. Returns the sound's name, or nil when nothing was kept for that key.
    public func rejectHeard(key: String) throws -> String? {
        try pool.write { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT sound, samples FROM heard WHERE key = ?", arguments: [key]) else { return nil }
            let name: String = row["sound"], data: Data = row["samples"]
            let samples = data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
            try Self.insert(Clip(role: .rejected, source: "heard \(key)", samples: samples), for: name, at: Date().timeIntervalSince1970, db)
            try db.execute(sql: "DELETE FROM heard WHERE key = ?", arguments: [key])
            return name
        }
    }

    /// Changes whenever a sound or a clip is added or removed: a listener reloads on a change.
    public func revision() throws -> String {
        try pool.read { db in
            let row = try Row.fetchOne(db, sql: "SELECT (SELECT count(*) FROM sound_clip) AS clips, (SELECT max(id) FROM sound_clip) AS latest, (SELECT group_concat(name) FROM sound) AS names")
            return "\(row?["clips"] as Int? ?? 0)/\(row?["latest"] as Int? ?? 0)/\(row?["names"] as String? ?? "")"
        }
    }

    private static func insert(_ clip: Clip, for name: String, at time: Double, _ db: Database) throws {
        let data = clip.samples.withUnsafeBufferPointer { Data(buffer: $0) }
        try db.execute(
            sql: "INSERT INTO sound_clip (sound, role, source, seconds, samples, added) VALUES (?, ?, ?, ?, ?, ?)",
            arguments: [name, clip.role.rawValue, clip.source, Double(clip.samples.count) / sampleRate, data, time])
    }
}
