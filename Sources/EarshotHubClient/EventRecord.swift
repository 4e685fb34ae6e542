import Foundation

/// One event as every command prints it — `detect`, `listen --events`, `demo`, `watch`,
/// `sounds detect` — and as the hub stores and serves it (`StoredEvent` adds its id and source):
/// what (`kind`, `label`), when (`start` and `end` in seconds from the start of a recording;
/// `time`, ISO 8601 in UTC, for what was heard live), how sure (`confidence`, 0–1) and whether it
/// was kept quiet. One JSON object per line, keys sorted.
///
/// For one release each command also writes the names it wrote before, so that scripts reading
/// them go on working: `class` (the alert's label), `sound` and `score` (an enrolled sound's label
/// and confidence), `position` (where in a watched file). Reading, both are accepted.
public struct EventRecord: Codable, Equatable, Sendable {
    public var kind: EventKind
    public var label: String
    public var start: Double?
    public var end: Double?
    public var time: String?
    public var confidence: Double?
    public var quiet: Bool?
    /// Which of the former names this record is written with.
    public var formerNames: FormerNames?

    public enum FormerNames: Sendable { case alert, sound, position }

    public init(kind: EventKind, label: String, start: Double? = nil, end: Double? = nil, time: String? = nil,
                confidence: Double? = nil, quiet: Bool? = nil, formerNames: FormerNames? = nil) {
        self.kind = kind
        self.label = label
        // Times to 10 ms, confidences to the third place (thresholds are set that finely); a
        // value that is not a number is left out rather than written.
        self.start = start.flatMap { $0.isFinite ? Self.rounded($0, 2) : nil }
        self.end = end.flatMap { $0.isFinite ? Self.rounded($0, 2) : nil }
        self.time = time
        self.confidence = confidence.flatMap { $0.isFinite ? Self.rounded($0, 3) : nil }
        self.quiet = quiet
        self.formerNames = formerNames
    }

    private enum Key: String, CodingKey {
        case kind, label, start, end, time, confidence, quiet
        case `class`, sound, score, position
    }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: Key.self)
        let former = try c.decodeIfPresent(String.self, forKey: .class) ?? c.decodeIfPresent(String.self, forKey: .sound)
        guard let label = try c.decodeIfPresent(String.self, forKey: .label) ?? former else {
            throw DecodingError.keyNotFound(Key.label, .init(codingPath: c.codingPath, debugDescription: "an event needs a label"))
        }
        let kind = try c.decodeIfPresent(EventKind.self, forKey: .kind)
            ?? (c.contains(.sound) ? .sound : c.contains(.class) ? .alert : nil)
        guard let kind else {
            throw DecodingError.keyNotFound(Key.kind, .init(codingPath: c.codingPath, debugDescription: "an event needs a kind"))
        }
        self.init(kind: kind, label: label,
                  start: try c.decodeIfPresent(Double.self, forKey: .start) ?? c.decodeIfPresent(Double.self, forKey: .position),
                  end: try c.decodeIfPresent(Double.self, forKey: .end),
                  time: try c.decodeIfPresent(String.self, forKey: .time),
                  confidence: try c.decodeIfPresent(Double.self, forKey: .confidence) ?? c.decodeIfPresent(Double.self, forKey: .score),
                  quiet: try c.decodeIfPresent(Bool.self, forKey: .quiet))
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: Key.self)
        try c.encode(kind, forKey: .kind)
        try c.encode(label, forKey: .label)
        try c.encodeIfPresent(start, forKey: .start)
        try c.encodeIfPresent(end, forKey: .end)
        try c.encodeIfPresent(time, forKey: .time)
        try c.encodeIfPresent(confidence, forKey: .confidence)
        try c.encodeIfPresent(quiet, forKey: .quiet)
        switch formerNames {
        case .alert?: try c.encode(label, forKey: .class)
        case .sound?:
            try c.encode(label, forKey: .sound)
            try c.encodeIfPresent(confidence, forKey: .score)
        case .position?: try c.encodeIfPresent(start, forKey: .position)
        case nil: break
        }
    }

    /// The record as one line of JSON, keys sorted.
    public var jsonLine: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try! encoder.encode(self), as: UTF8.self)
    }

    private static func rounded(_ value: Double, _ places: Int) -> Double {
        let scale = pow(10, Double(places))
        return (value * scale).rounded() / scale
    }
}
