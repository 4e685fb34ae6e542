import Foundation

/// Earshot as a Home Assistant device over MQTT: device discovery (retained, re-announced when
/// Home Assistant comes back online), availability with a last will, events as JSON (QoS 1),
/// a sound binary sensor, a level sensor, a listening switch and a snooze button.
public final class HomeAssistantBridge: @unchecked Sendable {
    public let node: String
    private let version: String
    private let mqtt: MQTTClient
    private let lock = NSLock()
    private var labels: [String]
    private var listening = true
    private var snoozedUntil = Date.distantPast
    private var soundOn: Bool?
    private let snoozed: (@Sendable () -> Void)?
    public static let snoozeSeconds = 15.0 * 60

    var base: String { "earshot/\(node)" }
    var availabilityTopic: String { "\(base)/availability" }
    public var discoveryTopic: String { "homeassistant/device/earshot_\(node)/config" }

    /// - Parameters:
    ///   - node: this device's name in topics and ids (letters, digits and _ are kept).
    ///   - eventLabels: one event entity each (alert classes, enrolled sounds).
    ///   - snoozed: what the snooze button does; by default the bridge itself keeps quiet for
    ///     `snoozeSeconds`.
    public init(url: String, node: String, eventLabels: [String], version: String, snoozed: (@Sendable () -> Void)? = nil) throws {
        self.node = Self.sanitize(node)
        self.version = version
        labels = eventLabels
        self.snoozed = snoozed
        let base = "earshot/\(self.node)"
        mqtt = try MQTTClient(url: url, clientID: "earshot-\(self.node)-\(getpid())",
                              will: .init(topic: "\(base)/availability", payload: "offline"))
        // Every (re)connection, and Home Assistant coming back, announces the device again: a
        // broker that restarted without persistence has forgotten the retained messages.
        try mqtt.start(
            onConnect: { [unowned self] in
                for topic in ["homeassistant/status", "\(base)/listening/set", "\(base)/snooze"] { mqtt.subscribe(topic) }
                announce()
            },
            onMessage: { [unowned self] topic, payload in
                switch topic {
                case "homeassistant/status" where payload == "online": announce()
                case "\(base)/listening/set": setListening(payload.uppercased() == "ON")
                case "\(base)/snooze": snooze()
                default: break
                }
            })
    }

    /// The event entities, one per label.
    public var eventLabels: [String] { lock.withLock { labels } }

    /// Whether events should reach people now: listening, and not snoozed.
    public var isAnnouncing: Bool {
        lock.withLock { listening && Date() >= snoozedUntil }
    }

    /// Announces the device again when its event entities change (a sound enrolled or removed).
    public func update(eventLabels: [String]) {
        let changed = lock.withLock {
            defer { labels = eventLabels }
            return labels != eventLabels
        }
        if changed { announce() }
    }

    private func announce() {
        let (labels, listening, sound): ([String], Bool, Bool?) = lock.withLock { (self.labels, self.listening, soundOn) }
        let discovery = Self.discovery(node: node, labels: labels, version: version)
        mqtt.publish(discoveryTopic, discovery, retain: true)
        mqtt.publish(availabilityTopic, "online", retain: true)
        mqtt.publish("\(base)/listening", listening ? "ON" : "OFF", retain: true)
        if let sound { mqtt.publish("\(base)/sound", sound ? "ON" : "OFF", retain: true) }
    }

    private func snooze() {
        if let snoozed {
            snoozed()
        } else {
            lock.withLock { snoozedUntil = Date().addingTimeInterval(Self.snoozeSeconds) }
        }
    }

    private func setListening(_ on: Bool) {
        lock.withLock { listening = on }
        mqtt.publish("\(base)/listening", on ? "ON" : "OFF", retain: true)
    }

    /// An event: the JSON record at `earshot/NODE/event`, and the matching event entity's trigger.
    public func publishEvent(kind: String, label: String, time: Date, confidence: Double?, source: String? = nil) {
        guard isAnnouncing else { return }
        var record: [String: Any] = ["kind": kind, "label": label, "time": ISO8601DateFormatter().string(from: time)]
        if let source { record["source"] = source }
        var trigger: [String: Any] = ["event_type": "detected"]
        if let confidence {
            record["confidence"] = (confidence * 100).rounded() / 100
            trigger["confidence"] = record["confidence"]
        }
        mqtt.publish("\(base)/event", Self.json(record))
        mqtt.publish("\(base)/event/\(Self.sanitize(label))", Self.json(trigger))
    }

    /// What the sound sensor said last (off until it has said anything).
    public var isSoundOn: Bool { lock.withLock { soundOn ?? false } }

    /// The sound binary sensor: on while something (an alert) is heard.
    public func publishSound(_ on: Bool) {
        lock.withLock { soundOn = on }
        mqtt.publish("\(base)/sound", on ? "ON" : "OFF", retain: true)
    }

    /// The level sensor, dBFS.
    public func publishLevel(_ dbfs: Double) { mqtt.publish("\(base)/level", String(format: "%.1f", dbfs), qos: 0) }

    /// Says goodbye (availability offline, retained) and disconnects.
    public func close() {
        mqtt.publish(availabilityTopic, "offline", retain: true)
        mqtt.close()
    }

    static func sanitize(_ text: String) -> String {
        let kept = text.lowercased().map { $0.isLetter || $0.isNumber ? $0 : "_" }
        return String(kept).isEmpty ? "earshot" : String(kept)
    }

    static func json(_ object: [String: Any]) -> String {
        String(decoding: try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]), as: UTF8.self)
    }

    /// Home Assistant's device-based discovery payload.
    static func discovery(node: String, labels: [String], version: String) -> String {
        let base = "earshot/\(node)", id = "earshot_\(node)"
        var components: [String: Any] = [:]
        for label in labels {
            let key = sanitize(label)
            var entity: [String: Any] = [
                "p": "event", "name": label.replacingOccurrences(of: "_", with: " ").capitalized, "unique_id": "\(id)_\(key)",
                "evt_typ": ["detected"], "stat_t": "\(base)/event/\(key)",
            ]
            if key == "doorbell" { entity["dev_cla"] = "doorbell" }
            components[key] = entity
        }
        components["sound"] = ["p": "binary_sensor", "name": "Sound", "dev_cla": "sound", "unique_id": "\(id)_sound", "stat_t": "\(base)/sound"]
        components["level"] = ["p": "sensor", "name": "Level", "unit_of_meas": "dBFS", "stat_cla": "measurement", "unique_id": "\(id)_level",
                               "stat_t": "\(base)/level"]
        components["listening"] = ["p": "switch", "name": "Listening", "unique_id": "\(id)_listening", "stat_t": "\(base)/listening",
                                   "cmd_t": "\(base)/listening/set"]
        components["snooze"] = ["p": "button", "name": "Snooze 15 min", "unique_id": "\(id)_snooze", "cmd_t": "\(base)/snooze"]
        let payload: [String: Any] = [
            "dev": ["ids": [id], "name": "Earshot \(node)", "mf": "Earshot", "mdl": "Earshot", "sw": version],
            "o": ["name": "earshot", "sw": version],
            "avty_t": "\(base)/availability",
            "cmps": components,
            "qos": 1,
        ]
        return json(payload)
    }
}
