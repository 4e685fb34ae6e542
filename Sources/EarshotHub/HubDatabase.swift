import EarshotCore
import Foundation
import GRDB

/// The hub's SQLite file (`hub.sqlite`): events, settings and enrolled sounds, each store with
/// its own tables, one schema, one connection pool shared by the stores. Write-ahead log, and
/// `synchronous = FULL` on the writer, so a commit is on the disk (the log fsynced) before it
/// returns: what was acknowledged survives a killed process and a power cut alike.
public final class HubDatabase: Sendable {
    public let path: String
    let pool: DatabasePool

    public init(path: String) throws {
        self.path = path
        var configuration = Configuration()
        // The hub, `watch` and `sounds` commands share the file: a writer waits its turn.
        configuration.busyMode = .timeout(10)
        do {
            try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            pool = try DatabasePool(path: path, configuration: configuration)
            try Self.migrator.migrate(pool)
            // GRDB turns every WAL connection to `synchronous = NORMAL` after `prepareDatabase`
            // has run, and NORMAL syncs the log only at checkpoints. The pool's one writer
            // connection lives as long as the pool, so FULL set on it here holds for every write.
            try pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = FULL") }
        } catch let error as DatabaseError {
            throw HubError.unusableDatabase(path: path, reason: error.message ?? "\(error.resultCode)")
        } catch {
            throw EarshotError.writeFailed(path: path, reason: error.localizedDescription)
        }
        let level = try writerSynchronous()
        guard level == Self.full else {
            throw EarshotError.internalFailure("\(path): the writer runs with synchronous = \(level), not FULL (\(Self.full)): acknowledged events could be lost in a power cut")
        }
    }

    /// SQLite's `PRAGMA synchronous` value for FULL.
    public static let full = 2

    /// The writer connection's `PRAGMA synchronous`, as SQLite reports it.
    public func writerSynchronous() throws -> Int {
        try pool.writeWithoutTransaction { db in try Int.fetchOne(db, sql: "PRAGMA synchronous") ?? -1 }
    }

    private static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("events") { db in
            try db.create(table: "event") { t in
                t.autoIncrementedPrimaryKey("id")
                t.column("kind", .text).notNull()
                t.column("label", .text).notNull()
                t.column("time", .double).notNull()
                t.column("confidence", .double)
                t.column("source", .text)
                t.column("key", .text).unique()
                t.column("received", .double).notNull()
            }
        }
        migrator.registerMigration("quiet") { db in
            try db.alter(table: "event") { t in t.add(column: "quiet", .boolean).notNull().defaults(to: false) }
            try db.create(table: "setting") { t in
                t.primaryKey("name", .text)
                t.column("value", .text)
            }
        }
        migrator.registerMigration("sounds") { db in
            try db.create(table: "sound") { t in
                t.primaryKey("name", .text)
                t.column("enrolled", .double).notNull()
            }
            // Each recording as 16 kHz mono float32, so any matcher can be rebuilt from it.
            try db.create(table: "sound_clip") { t in
                t.autoIncrementedPrimaryKey("id")
                t.column("sound", .text).notNull().indexed().references("sound", onDelete: .cascade)
                t.column("role", .text).notNull()  // enrollment, room_tone, rejected
                t.column("source", .text).notNull()
                t.column("seconds", .double).notNull()
                t.column("samples", .blob).notNull()
                t.column("added", .double).notNull()
            }
        }
        migrator.registerMigration("heard") { db in
            // What `watch` heard when it announced a sound, kept a while so the user can say
            // "not my doorbell" about it: keyed by the event's key.
            try db.create(table: "heard") { t in
                t.primaryKey("key", .text)
                t.column("sound", .text).notNull().indexed().references("sound", onDelete: .cascade)
                t.column("time", .double).notNull()
                t.column("samples", .blob).notNull()
            }
        }
        return migrator
    }
}
