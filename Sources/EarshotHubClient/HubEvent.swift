import EarshotCore
import Foundation

/// What an event is about.
public enum EventKind: String, Codable, CaseIterable, Sendable {
    /// A siren, alarm, horn or doorbell the alert detector heard.
    case alert
    /// An enrolled sound (the user's own doorbell, the washing machine).
    case sound
    /// Sent on purpose, to check the path to the user's devices.
    case test
}

/// An event as a producer submits it, checked field by field.
public struct EventSubmission: Equatable, Sendable {
    public var kind: EventKind
    public var label: String
    /// Unix seconds.
    public var time: Double
    public var confidence: Double?
    public var source: String?
    /// Chosen by the producer, once per event: a retried post with the same key is stored once.
    public var key: String?

    public init(kind: EventKind, label: String, time: Double, confidence: Double? = nil, source: String? = nil, key: String? = nil) {
        self.kind = kind
        self.label = label
        self.time = time
        self.confidence = confidence
        self.source = source
        self.key = key
    }

    /// The fields a body may have.
    static let fields = ["kind", "label", "time", "confidence", "source", "key"]

    /// The largest request body accepted.
    public static let maximumBodyBytes = 16 * 1024

    /// Parses a request body; every refusal is one sentence naming the field.
    public init(json data: Data) throws(HubRequestError) {
        guard !data.isEmpty else { throw .init("the body is empty: send a JSON object with kind, label and time") }
        guard let parsed = try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed]) else {
            throw .init("the body is not valid JSON")
        }
        guard let object = parsed as? [String: Any] else { throw .init("the body must be a JSON object") }
        // A misspelt field ("confidance") is a mistake to report, not a field to drop.
        if let unknown = object.keys.sorted().first(where: { !Self.fields.contains($0) }) {
            throw .init("unknown field '\(unknown)': an event has \(Self.fields.joined(separator: ", "))")
        }

        func string(_ name: String, required: Bool, maximumLength: Int) throws(HubRequestError) -> String? {
            guard let value = object[name], !(value is NSNull) else {
                if required { throw .init("'\(name)' is missing") }
                return nil
            }
            guard let text = value as? String else { throw .init("'\(name)' must be a string") }
            guard !text.isEmpty, text.count <= maximumLength else { throw .init("'\(name)' must be 1–\(maximumLength) characters") }
            guard !text.hasControlCharacters else { throw .init("'\(name)' must not hold control characters (U+0000–U+001F, U+007F)") }
            guard text.contains(where: { !$0.isWhitespace }) else { throw .init("'\(name)' must not be blank") }
            return text
        }
        func number(_ value: Any) -> Double? {
            // JSONSerialization gives NSNumber for numbers and booleans alike; refuse booleans.
            guard let number = value as? NSNumber, String(cString: number.objCType) != "c" else { return nil }
            return number.doubleValue
        }

        let kindText = try string("kind", required: true, maximumLength: 16)!
        guard let kind = EventKind(rawValue: kindText) else {
            throw .init("'kind' must be one of \(EventKind.allCases.map(\.rawValue).joined(separator: ", ")), not '\(kindText)'")
        }
        let label = try string("label", required: true, maximumLength: 200)!
        guard let timeValue = object["time"], !(timeValue is NSNull) else { throw .init("'time' is missing") }
        let time: Double
        if let seconds = number(timeValue) {
            time = seconds
        } else if let text = timeValue as? String, let date = Self.parseISO8601(text) {
            time = date.timeIntervalSince1970
        } else {
            throw .init("'time' must be unix seconds or an ISO 8601 date-time")
        }
        guard time.isFinite, time > 0, time < 253_402_300_800 else { throw .init("'time' is out of range") }
        var confidence: Double?
        if let value = object["confidence"], !(value is NSNull) {
            guard let c = number(value), c.isFinite, (0...1).contains(c) else { throw .init("'confidence' must be a number from 0 to 1") }
            confidence = c
        }
        self.init(kind: kind, label: label, time: time, confidence: confidence,
                  source: try string("source", required: false, maximumLength: 200),
                  key: try string("key", required: false, maximumLength: 100))
    }

    /// The body a producer posts, which `init(json:)` reads back: the time as the hub answers it,
    /// ISO 8601 to the millisecond.
    public var jsonData: Data {
        var object: [String: Any] = ["kind": kind.rawValue, "label": label, "time": StoredEvent.iso8601(time)]
        if let key { object["key"] = key }
        if let confidence { object["confidence"] = confidence }
        if let source { object["source"] = source }
        return try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
    }

    package static func parseISO8601(_ text: String) -> Date? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let date = formatter.date(from: text) { return date }
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.date(from: text)
    }
}

extension String {
    /// Whether the text holds a C0 control character or DEL: no text the hub stores may, since
    /// a NUL or an escape code would reach every log, terminal and notification that shows it.
    package var hasControlCharacters: Bool {
        unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }
    }
}

/// A request the hub refuses, with the sentence the client gets back.
public struct HubRequestError: EarshotFailure, Equatable {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// An event as the hub keeps and serves it.
public struct StoredEvent: Codable, Equatable, Sendable {
    public var id: Int64
    public var kind: EventKind
    public var label: String
    /// ISO 8601, UTC, milliseconds.
    public var time: String
    public var confidence: Double?
    public var source: String?
    /// Arrived while the hub was snoozed or in quiet hours: shown, but nobody is disturbed.
    public var quiet: Bool

    public init(id: Int64, kind: EventKind, label: String, time: String, confidence: Double?, source: String?, quiet: Bool = false) {
        self.id = id
        self.kind = kind
        self.label = label
        self.time = time
        self.confidence = confidence
        self.source = source
        self.quiet = quiet
    }

    public static func iso8601(_ unixSeconds: Double) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: Date(timeIntervalSince1970: unixSeconds))
    }

    /// Compact JSON, keys in a fixed order.
    public var json: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try! encoder.encode(self), as: UTF8.self)
    }
}
