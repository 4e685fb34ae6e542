import EarshotHubClient
import Foundation

/// `earshot serve --mqtt`: the hub as one Home Assistant device, where every event meets.
/// Every event the hub stores, from whichever producer, is published (quiet ones excepted, as
/// on every other path); the live feed gives the level and the sound sensor; the snooze button
/// snoozes the hub itself, as the dashboard does; sounds enrolled while it runs become event
/// entities of their own.
public final class HubHomeAssistant: @unchecked Sendable {
    public let bridge: HomeAssistantBridge
    private let hub: Hub
    private let alertLabels: [String]
    private let lock = NSLock()
    private var lastAlert = Date.distantPast
    private var work: Task<Void, Never>?

    /// How long the sound sensor stays on after an alert event, when no live feed says more.
    static let soundSeconds = 10.0

    /// Connects, announces the device and starts following the hub's events.
    public static func start(hub: Hub, url: String, node: String, alertLabels: [String], version: String) async throws -> HubHomeAssistant {
        let store = hub.store
        let bridge = try HomeAssistantBridge(
            url: url, node: node, eventLabels: alertLabels + (try hub.sounds.names()), version: version,
            snoozed: {
                Task {
                    let until = Date().timeIntervalSince1970 + HomeAssistantBridge.snoozeSeconds
                    _ = try? await store.updateSettings { settings in
                        var settings = settings
                        settings.snoozeUntil = max(settings.snoozeUntil ?? 0, until)
                        return settings
                    }
                }
            })
        bridge.publishSound(false)
        let bridged = HubHomeAssistant(hub: hub, bridge: bridge, alertLabels: alertLabels)
        // Subscribed before returning, so no event stored after this is missed.
        let events = await hub.storedEvents()
        bridged.work = Task {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { for await event in events { bridged.publish(event) } }
                group.addTask {
                    while !Task.isCancelled {
                        await bridged.tick()
                        try? await Task.sleep(for: .seconds(1))
                    }
                }
            }
        }
        return bridged
    }

    private init(hub: Hub, bridge: HomeAssistantBridge, alertLabels: [String]) {
        self.hub = hub
        self.bridge = bridge
        self.alertLabels = alertLabels
    }

    private func publish(_ event: StoredEvent) {
        guard !event.quiet else { return }
        if event.kind == .alert { lock.withLock { lastAlert = Date() } }
        let time = EventSubmission.parseISO8601(event.time) ?? Date()
        bridge.publishEvent(kind: event.kind.rawValue, label: event.label, time: time, confidence: event.confidence, source: event.source)
    }

    /// Once a second: the level and the sound sensor from the live feed, and the event entities.
    private func tick() async {
        let frame = await hub.live.current()
        if let frame { bridge.publishLevel(Double(frame.levelDBFS)) }
        let recentAlert = lock.withLock { Date().timeIntervalSince(lastAlert) < Self.soundSeconds }
        let sounding = (frame?.alerting ?? false) || recentAlert
        if sounding != bridge.isSoundOn { bridge.publishSound(sounding) }
        if let names = try? hub.sounds.names() { bridge.update(eventLabels: alertLabels + names) }
    }

    /// Stops following, says offline (retained) and disconnects.
    public func close() {
        work?.cancel()
        bridge.close()
    }
}
