import EarshotCore
import Foundation

/// Hearing thresholds of both ears in dB HL, as a fitting reads them: from a JSON file
/// `{"left":{"250":20,"500":25,…},"right":{…}}` or from a stored hearing test.
public struct PureToneAudiogram: Equatable, Sendable {
    /// dB HL by frequency in Hz, per ear.
    public var thresholds: [Ear: [Double: Double]]

    /// The frequencies a fitting needs in each ear: NAL-R's average is taken over these.
    public static let requiredHz: [Double] = [500, 1000, 2000]

    public init(left: [Double: Double], right: [Double: Double]) throws {
        thresholds = [.left: left, .right: right]
        try validate()
    }

    /// From a stored test: a no-response counts as the loudest level tried.
    public init(test: TestResult) throws {
        var table: [Ear: [Double: Double]] = [.left: [:], .right: [:]]
        for result in test.thresholds {
            guard let level = result.thresholdDBHL ?? result.noResponseAtDBHL else { continue }
            table[result.ear]![result.frequencyHz] = level
        }
        thresholds = table
        try validate()
    }

    /// Parses `{"left":{"250":20,…},"right":{…}}`; `source` names it in errors.
    public init(json data: Data, source: String) throws {
        guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw AudiometryError.audiogram(source: source, .notAnAudiogram)
        }
        var table: [Ear: [Double: Double]] = [:]
        for ear in Ear.allCases {
            guard let levels = object[ear.rawValue] as? [String: Any] else {
                throw AudiometryError.audiogram(source: source, .missingEar(ear))
            }
            var ears: [Double: Double] = [:]
            for (key, value) in levels {
                guard let hz = Double(key), hz.isFinite else {
                    throw AudiometryError.audiogram(source: source, .notAFrequency(ear, key))
                }
                // (A JSON number arrives as NSNumber, which also bridges to Bool: ask for the type.)
                guard let number = value as? NSNumber, type(of: value) != Bool.self else {
                    throw AudiometryError.audiogram(source: source, .notALevel(ear, hz: key, value: "\(value)"))
                }
                ears[hz] = number.doubleValue
            }
            table[ear] = ears
        }
        if let extra = object.keys.first(where: { Ear(rawValue: $0) == nil }) {
            throw AudiometryError.audiogram(source: source, .unknownKey(extra))
        }
        thresholds = table
        do { try validate() } catch AudiometryError.audiogram(nil, let fault) {
            throw AudiometryError.audiogram(source: source, fault)
        }
    }

    /// An audiogram from a JSON file, or else, where `reference` is a number, a stored test's id
    /// in `results`.
    public static func load(fileOrTest reference: String, results: () throws -> ResultStore) throws -> PureToneAudiogram {
        if FileManager.default.fileExists(atPath: reference) { return try load(path: reference) }
        guard let id = Int64(reference) else { throw AudiometryError.notAnAudiogramOrTest(reference) }
        return try PureToneAudiogram(test: try results().test(id: id).result)
    }

    public static func load(path: String) throws -> PureToneAudiogram {
        guard let data = FileManager.default.contents(atPath: path) else { throw EarshotError.fileNotFound(path: path) }
        return try PureToneAudiogram(json: data, source: path)
    }

    private func validate() throws {
        for ear in Ear.allCases {
            let table = thresholds[ear] ?? [:]
            for (hz, level) in table {
                guard (125...16_000).contains(hz) else {
                    throw AudiometryError.audiogram(source: nil, .frequencyOutOfRange(ear, hz: hz))
                }
                guard level.isFinite, (-10...120).contains(level) else {
                    throw AudiometryError.audiogram(source: nil, .levelOutOfRange(ear, hz: hz, dBHL: level))
                }
            }
            let missing = Self.requiredHz.filter { table[$0] == nil }
            guard missing.isEmpty else {
                throw AudiometryError.audiogram(source: nil, .missingThresholds(ear, hz: missing))
            }
        }
    }

    /// The threshold at any frequency, between and beyond the measured ones (`LogFrequency`).
    public func levelDBHL(_ ear: Ear, atHz frequency: Double) -> Double {
        LogFrequency.interpolate(thresholds[ear] ?? [:], atHz: frequency) ?? 0
    }
}

/// Values tabulated by frequency, read anywhere: linear in log frequency between tabulated
/// frequencies, the nearest one's value beyond them; nil for an empty table.
public enum LogFrequency {
    public static func interpolate(_ table: [Double: Double], atHz frequency: Double) -> Double? {
        let points = table.sorted { $0.key < $1.key }
        guard let first = points.first, let last = points.last else { return nil }
        if frequency <= first.key { return first.value }
        if frequency >= last.key { return last.value }
        let upper = points.firstIndex { $0.key >= frequency }!
        let (a, b) = (points[upper - 1], points[upper])
        return a.value + (b.value - a.value) * log(frequency / a.key) / log(b.key / a.key)
    }
}
