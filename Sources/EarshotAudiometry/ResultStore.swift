import EarshotCore
import Foundation
import GRDB

/// A stored test: who, when, with what, and how it went.
public struct StoredTest: Codable, Equatable, Sendable {
    public var id: Int64
    public var person: String
    public var takenAt: Date
    public var calibration: String
    public var result: TestResult
}

/// Audiograms kept in SQLite (write-ahead log), one file for a household or a clinic.
public final class ResultStore: Sendable {
    private let pool: DatabasePool

    /// Where results go in a data folder (the hub's too).
    public static func path(in folder: String = DataDirectory.path) -> String {
        (folder as NSString).appendingPathComponent("results.sqlite")
    }

    public init(path: String) throws {
        let directory = (path as NSString).deletingLastPathComponent
        do {
            if !directory.isEmpty { try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true) }
            pool = try DatabasePool(path: path)
            try Self.migrator.migrate(pool)
        } catch let error as DatabaseError {
            throw AudiometryError.unusableResults(path: path, reason: error.message ?? "\(error.resultCode)")
        } catch {
            throw EarshotError.writeFailed(path: path, reason: error.localizedDescription)
        }
    }

    private static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.create(table: "person") { t in
                t.autoIncrementedPrimaryKey("id")
                t.column("name", .text).notNull().unique()
            }
            try db.create(table: "test") { t in
                t.autoIncrementedPrimaryKey("id")
                t.belongsTo("person", onDelete: .cascade).notNull()
                t.column("takenAt", .datetime).notNull()
                t.column("transducer", .text).notNull()
                t.column("calibration", .text).notNull()
                t.column("procedure", .text).notNull()
                t.column("presentations", .integer).notNull()
                t.column("reliability", .jsonText).notNull()
            }
            try db.create(table: "threshold") { t in
                t.belongsTo("test", onDelete: .cascade).notNull()
                t.column("ear", .text).notNull()
                t.column("frequencyHz", .double).notNull()
                t.column("thresholdDBHL", .double)
                t.column("noResponseAtDBHL", .double)
                t.column("presentations", .integer).notNull()
                t.primaryKey(["testId", "ear", "frequencyHz"])
            }
        }
        return migrator
    }

    /// Stores a result; returns its id.
    @discardableResult
    public func save(_ result: TestResult, person: String, calibration: String, takenAt: Date = Date()) throws -> Int64 {
        let name = person.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !name.isEmpty else { throw AudiometryError.noPersonName }
        let reliability = String(decoding: try JSONEncoder().encode(result.reliability), as: UTF8.self)
        return try pool.write { db in
            try db.execute(sql: "INSERT OR IGNORE INTO person (name) VALUES (?)", arguments: [name])
            let personID = try Int64.fetchOne(db, sql: "SELECT id FROM person WHERE name = ?", arguments: [name])!
            try db.execute(
                sql: """
                    INSERT INTO test (personId, takenAt, transducer, calibration, procedure, presentations, reliability)
                    VALUES (?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [personID, takenAt, result.transducer.rawValue, calibration, result.procedure, result.presentations, reliability])
            let testID = db.lastInsertedRowID
            for t in result.thresholds {
                try db.execute(
                    sql: "INSERT INTO threshold (testId, ear, frequencyHz, thresholdDBHL, noResponseAtDBHL, presentations) VALUES (?, ?, ?, ?, ?, ?)",
                    arguments: [testID, t.ear.rawValue, t.frequencyHz, t.thresholdDBHL, t.noResponseAtDBHL, t.presentations])
            }
            return testID
        }
    }

    /// Every stored test, newest first (thresholds included).
    public func all() throws -> [StoredTest] {
        try pool.read { db in
            try Row.fetchAll(db, sql: "SELECT test.*, person.name AS person FROM test JOIN person ON person.id = test.personId ORDER BY takenAt DESC, test.id DESC")
                .map { try Self.test(from: $0, db) }
        }
    }

    public func test(id: Int64) throws -> StoredTest {
        let row = try pool.read { db in
            try Row.fetchOne(db, sql: "SELECT test.*, person.name AS person FROM test JOIN person ON person.id = test.personId WHERE test.id = ?", arguments: [id])
                .map { try Self.test(from: $0, db) }
        }
        guard let row else { throw AudiometryError.noStoredTest(id: id) }
        return row
    }

    private static func test(from row: Row, _ db: Database) throws -> StoredTest {
        let id: Int64 = row["id"]
        let thresholds = try Row.fetchAll(db, sql: "SELECT * FROM threshold WHERE testId = ? ORDER BY rowid", arguments: [id]).map { t in
            ThresholdResult(ear: Ear(rawValue: t["ear"]) ?? .left, frequencyHz: t["frequencyHz"], thresholdDBHL: t["thresholdDBHL"],
                            noResponseAtDBHL: t["noResponseAtDBHL"], presentations: t["presentations"])
        }
        let reliabilityText: String = row["reliability"]
        let reliability = try JSONDecoder().decode(Reliability.self, from: Data(reliabilityText.utf8))
        let result = TestResult(procedure: row["procedure"], transducer: Transducer(rawValue: row["transducer"]) ?? .supraAural,
                                thresholds: thresholds, presentations: row["presentations"], reliability: reliability)
        return StoredTest(id: id, person: row["person"], takenAt: row["takenAt"], calibration: row["calibration"], result: result)
    }
}
