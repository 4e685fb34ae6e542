import Foundation

/// Earshot as a Home Assistant device over MQTT: device discovery (retained, re-announced when
/// Home Assistant comes back online), availability with a last will, events as JSON (QoS 1),
/// a sound binary sensor, a level sensor, a listening switch and a snooze button.
public final class HomeAssistantBridge: @unchecked Sendable {
    public let node: String
    public let eventLabels: [String]
    private let mqtt: MQTTClient
    private let lock = NSLock()
    private var listening = true
    private var snoozedUntil = Date.distantPast
    public static let snoozeSeconds = 15.0 * 60

    var base: String { "earshot/\(node)" }
    var availabilityTopic: String { "\(base)/availability" }
    public var discoveryTopic: String { "homeassistant/device/earshot_\(node)/config" }

    /// - Parameters:
    ///   - node: this device's name in topics and ids (letters, digits and _ are kept).
    ///   - eventLabels: one event entity each (alert classes, enrolled sounds).
    public init(url: String, node: String, eventLabels: [String], version: String) throws {
        self.node = Self.sanitize(node)
        self.eventLabels = eventLabels
        let base = "earshot/\(self.node)"
        mqtt = try MQTTClient(url: url, clientID: "earshot-\(self.node)-\(getpid())",
                              will: .init(topic: "\(base)/availability", payload: "offline"))
        let discovery = Self.discovery(node: self.node, labels: eventLabels, version: version)
        try mqtt.start(
            onConnect: { [unowned self] in
                for topic in ["homeassistant/status", "\(base)/listening/set", "\(base)/snooze"] { mqtt.subscribe(topic) }
                announce(discovery)
            },
            onMessage: { [unowned self] topic, payload in
                switch topic {
                case "homeassistant/status" where payload == "online": announce(discovery)
                case "\(base)/listening/set": setListening(payload.uppercased() == "ON")
                case "\(base)/snooze": lock.withLock { snoozedUntil = Date().addingTimeInterval(Self.snoozeSeconds) }
                default: break
                }
            })
    }

    /// Whether events should reach people now: listening, and not snoozed.
    public var isAnnouncing: Bool {
        lock.withLock { listening && Date() >= snoozedUntil }
    }

    private func announce(_ discovery: String) {
        mqtt.publish(discoveryTopic, discovery, retain: true)
        mqtt.publish(availabilityTopic, "online", retain: true)
        mqtt.publish("\(base)/listening", lock.withLock { listening } ? "ON" : "OFF", retain: true)
    }

    private func setListening(_ on: Bool) {
        lock.withLock { listening = on }
        mqtt.publish("\(base)/listening", on ? "ON" : "OFF", retain: true)
    }

    /// An event: the JSON record at `earshot/NODE/event`, and the matching event entity's trigger.
    public func publishEvent(kind: String, label: String, time: Date, confidence: Double?) {
        guard isAnnouncing else { return }
        var record: [String: Any] = ["kind": kind, "label": label, "time": ISO8601DateFormatter().string(from: time)]
        var trigger: [String: Any] = ["event_type": "detected"]
        if let confidence {
            record["confidence"] = (confidence * 100).rounded() / 100
            trigger["confidence"] = record["confidence"]
        }
        mqtt.publish("\(base)/event", Self.json(record))
        mqtt.publish("\(base)/event/\(Self.sanitize(label))", Self.json(trigger))
    }

    /// The sound binary sensor: on while something (an alert) is heard.
    public func publishSound(_ on: Bool) { mqtt.publish("\(base)/sound", on ? "ON" : "OFF", retain: true) }

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
