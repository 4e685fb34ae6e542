import EarshotAlerts
import EarshotHub
import EarshotHubClient
import Foundation

/// Where announced events go, and whether they go: the one policy of every producer (`detect`,
/// `listen`, `watch`).
/// - A label is announced at most once per `cooldown` (a doorbell pressed three times is one
///   notification).
/// - With Home Assistant's listening switch off, or its snooze running, nothing is announced:
///   the user has turned Earshot off there.
/// - Sounds (never alerts) are quiet during the quiet hours and while the hub is snoozed or in
///   its own quiet hours: written and posted marked quiet, not published to Home Assistant.
/// - Otherwise the event goes to the hub (spooled and keyed, stored once however often it is
///   retried), to Home Assistant, and to `write` (a line on stdout, in the command line).
public final class EventFanOut {
    public struct Announcement: Equatable, Sendable {
        public var kind: EventKind
        public var label: String
        public var time: Date
        public var confidence: Double
        public var quiet: Bool
        /// The hub's key of the event (a fresh one without a hub).
        public var key: String
    }

    public let cooldown: Double
    public let quietHours: QuietHours?
    private let poster: HubPoster?
    private let hubQuiet: HubQuietFollower?
    private let bridge: HomeAssistantBridge?
    private let write: (Announcement) -> Void
    private var lastAnnounced: [String: Date] = [:]

    public init(poster: HubPoster?, hubQuiet: HubQuietFollower? = nil, bridge: HomeAssistantBridge?, cooldown: Double = 0,
                quietHours: QuietHours? = nil, write: @escaping (Announcement) -> Void = { _ in }) {
        self.poster = poster
        self.hubQuiet = hubQuiet
        self.bridge = bridge
        self.cooldown = cooldown
        self.quietHours = quietHours
        self.write = write
    }

    /// Announces an event unless the policy holds it back; what was announced, or nil.
    @discardableResult
    public func announce(kind: EventKind, label: String, time: Date, confidence: Double) -> Announcement? {
        guard bridge?.isAnnouncing ?? true else { return nil }
        if let last = lastAnnounced[label], time.timeIntervalSince(last) < cooldown { return nil }
        lastAnnounced[label] = time
        let quiet = kind != .alert && (HubSettings(quietHours: quietHours).isQuiet(kind, at: time) || (hubQuiet?.isQuiet ?? false))
        let key = poster?.submit(kind: kind, label: label, time: time, confidence: confidence) ?? UUID().uuidString
        if !quiet { bridge?.publishEvent(kind: kind.rawValue, label: label, time: time, confidence: confidence) }
        let announcement = Announcement(kind: kind, label: label, time: time, confidence: confidence, quiet: quiet, key: key)
        write(announcement)
        return announcement
    }

    /// An alert detector's change, its times counted from `origin`: an alert that began is
    /// announced; Home Assistant's sound sensor is on while one sounds.
    public func alert(_ change: AlertEventTracker.Change, from origin: Date) {
        switch change {
        case .began(let event):
            announce(kind: .alert, label: event.alertClass.rawValue, time: origin.addingTimeInterval(event.start), confidence: event.confidence)
            if bridge?.isAnnouncing ?? true { alertSounding(true) }
        case .ended:
            alertSounding(false)
        }
    }

    /// Home Assistant's sound sensor.
    public func alertSounding(_ on: Bool) { bridge?.publishSound(on) }

    /// Waits up to `seconds` for the hub to store what is queued; how many events are left
    /// (kept in the spool, where there is one).
    @discardableResult
    public func close(waitingUpTo seconds: Double) -> Int {
        hubQuiet?.close()
        let unsent = poster?.close(waitingUpTo: seconds) ?? 0
        bridge?.close()
        return unsent
    }
}
