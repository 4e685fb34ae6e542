import ArgumentParser
import EarshotAlerts
import EarshotAudiometry
import EarshotCore
import EarshotHub
import EarshotHubClient
import EarshotListening
import Foundation

/// `earshot serve`: the hub other devices follow.
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the hub: keep events and pass them to the user's other devices.",
        discussion: """
            Events posted to /api/events (with a bearer token) are stored in SQLite before they \
            are acknowledged, and streamed as Server-Sent Events (/api/events/stream), as ntfy \
            topics (/TOPIC/json, /TOPIC/sse: the ntfy phone app can subscribe) and to the \
            dashboard at /. The first run creates a token and prints it. Binds to loopback unless \
            --host says otherwise. With --mqtt the hub is one Home Assistant device that publishes \
            every event it stores, whichever producer sent it.
            """)

    @Option(help: "Address to bind (0.0.0.0 for the whole network).") var host = "127.0.0.1"
    @Option(help: "TCP port (0 picks a free one, printed at start).") var port = 8750
    @OptionGroup var data: DataFolderOption
    @Option(help: "The ntfy topic to answer to.") var topic = "earshot"
    @Option(help: "Calibration profile for the dashboard's hearing test (from 'earshot calibration create'); without one the page plays no tones.")
    var calibration: String?
    @OptionGroup var outputDevice: OutputDeviceOption
    @OptionGroup var mqtt: MQTTOptions
    @Flag(inversion: .prefixedNo, help: "Announce the hub on the local network by DNS-SD (_earshot._tcp, through Avahi) when it binds beyond loopback.")
    var announce = true

    func validate() throws {
        guard (0...65_535).contains(port) else { throw ValidationError("--port must be 0–65535, not \(port)") }
        guard !topic.isEmpty, topic.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }), topic != "api" else {
            throw ValidationError("--topic must be letters, digits, - and _ (and not 'api')")
        }
    }

    func run() async throws {
        var configuration = HubConfiguration(host: host, port: port, directory: data.folder, topic: topic)
        try configuration.check()
        if let calibration, let off = try configuration.playTones(calibrationPath: calibration, device: outputDevice.outputDevice) {
            Terminal.note("warning: \(off)")
        }
        let player = configuration.tonePlayer as? DeviceTonePlayer
        let hub = try Hub(configuration: configuration)
        if try hub.tokens.all().isEmpty {
            print("token: \(try hub.tokens.create())")
        }
        let homeAssistant: HubHomeAssistant? = if let url = mqtt.mqtt {
            try await HubHomeAssistant.start(hub: hub, url: url, node: mqtt.node ?? ProcessInfo.processInfo.hostName,
                                             alertLabels: AlertClass.allCases.map(\.rawValue), version: Earshot.version)
        } else {
            nil
        }
        defer { homeAssistant?.close() }
        let broker = mqtt.mqtt ?? ""
        let host = self.host, announces = announce && !configuration.isLoopback
        let announcement = Locked<HubAnnouncement?>(nil)
        try await hub.run(ready: { port in
            print("Earshot hub on http://\(host):\(port)/ (data in \(hub.configuration.directory))")
            if let token = try? hub.tokens.all().first {
                let reachable = host == "0.0.0.0" || host == "::" ? ProcessInfo.processInfo.hostName : host
                print("Dashboard: http://\(reachable):\(port)/#token=\(token)")
            }
            if let bridge = homeAssistant?.bridge { print("Home Assistant: device earshot_\(bridge.node) through \(broker)") }
            if let player { print("hearing test: tones on \(player.device.name), calibration '\(player.calibration.profile.name)'") }
            if announces {
                do {
                    let announced = try HubAnnouncement(name: "Earshot on \(ProcessInfo.processInfo.hostName)", port: port)
                    announcement.value = announced
                    print("announced as '\(announced.name)' (\(ServiceDiscovery.serviceType))")
                } catch {
                    Terminal.note("warning: \(error); monitors need the hub's URL")
                }
            }
            fflush(nil)
        })
        announcement.value?.stop()
    }
}

/// `earshot token create`: another bearer token for the hub.
struct TokenCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "token", abstract: "Manage the hub's bearer tokens.", subcommands: [Create.self])

    struct Create: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Create a new bearer token and print it.")

        @OptionGroup var data: DataFolderOption

        func run() throws {
            print(try TokenStore(directory: data.folder).create())
        }
    }
}

/// `--hub URL --token T` for the commands that produce events.
struct HubOptions: ParsableArguments {
    @Option(help: "Also send every event to this hub (http://HOST:8750).") var hub: String?
    @Option(help: "The hub's bearer token.") var token: String?

    func validate() throws {
        if let hub {
            do { _ = try HubAddress(url: hub, token: token ?? "") } catch let error as EarshotFailure { throw ValidationError(Terminal.sentence(for: error)) }
        }
        if hub == nil, token != nil { throw ValidationError("--token is for --hub") }
    }

    /// The hub's address, or nil without --hub.
    func address() throws -> HubAddress? {
        try hub.map { try HubAddress(url: $0, token: token ?? "") }
    }

    /// A poster for the hub, or nil without --hub.
    func poster() throws -> HubPoster? {
        guard let address = try address() else { return nil }
        let poster = HubPoster(address: address, source: ProcessInfo.processInfo.hostName)
        poster.warn = { Terminal.note("warning: \($0)") }
        return poster
    }
}

extension EventFanOut {
    /// At the end of a run: waits a while for the hub, and says what could not be sent.
    func finish() {
        let unsent = close(waitingUpTo: 10)
        if unsent > 0 { Terminal.note("warning: \(unsent) event(s) could not be sent to the hub") }
    }
}

/// `--mqtt mqtt://HOST:PORT` (and `--node`) for the commands that produce events: Earshot as a
/// Home Assistant device.
struct MQTTOptions: ParsableArguments {
    @Option(help: "Also publish to this MQTT broker for Home Assistant (mqtt://HOST:1883).") var mqtt: String?
    @Option(help: "This device's name in MQTT topics (default: the host name).") var node: String?

    func validate() throws {
        if let mqtt, !(URL(string: mqtt).map { $0.scheme == "mqtt" && !($0.host ?? "").isEmpty } ?? false) {
            throw ValidationError("--mqtt must be mqtt://HOST[:PORT], not '\(mqtt)'")
        }
        if mqtt == nil, node != nil { throw ValidationError("--node is for --mqtt") }
    }

    /// A connected bridge announcing the alert classes (and `extraLabels`: enrolled sounds), or
    /// nil without --mqtt.
    func bridge(extraLabels: [String] = []) throws -> HomeAssistantBridge? {
        guard let mqtt else { return nil }
        return try HomeAssistantBridge(url: mqtt, node: node ?? ProcessInfo.processInfo.hostName,
                                       eventLabels: AlertClass.allCases.map(\.rawValue) + extraLabels, version: Earshot.version)
    }
}

/// `earshot monitor URL --token T`: another computer's window on the hub.
struct Monitor: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Follow a hub: print each event as a JSON line, and with --notify raise a desktop notification.",
        discussion: """
            Reconnects by itself after the hub restarts or the network drops, resuming after the \
            last event it printed: nothing is missed and nothing is printed twice. Alerts are \
            raised as critical notifications (notify-send, from libnotify-bin). Without a URL it \
            looks for a hub that announces itself on the local network (DNS-SD, through Avahi).
            """)

    @Argument(help: "The hub, e.g. http://kitchen.local:8750 (default: the first hub found on the local network).") var url: String?
    @Option(help: "The hub's bearer token.") var token: String
    @Option(help: "Start after this event id (0: everything the hub kept); default: what arrives from now on.") var since: Int64?
    @Flag(help: "Raise a desktop notification for each event.") var notify = false

    func validate() throws {
        do { _ = try HubAddress(url: url ?? "http://hub.local", token: token) } catch let error as EarshotFailure {
            throw ValidationError(Terminal.sentence(for: error, hubOption: "<url>"))
        }
        if let since, since < 0 { throw ValidationError("--since must be an event id, 0 or more") }
    }

    func run() async throws {
        var url = self.url
        if url == nil {
            let found = try HubFinder.find()
            Terminal.note("found hub '\(found.name)' at \(found.url)")
            url = found.url
        }
        let address = try HubAddress(url: url!, token: token)
        let notifier = notify ? try DesktopNotifier() : nil
        try await HubFollower(address: address, since: since).follow(
            received: { _, json in
                print(json)
                fflush(nil)
                notifier?.show(json)
            },
            status: { Terminal.note($0) })
    }
}
