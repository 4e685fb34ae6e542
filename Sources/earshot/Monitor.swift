import ArgumentParser
import EarshotCore
import EarshotHub
import EarshotHubClient
import Foundation

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

    @Argument(help: "The hub, e.g. http://kitchen.local:8750 (default: the first hub found on the local network).")
    var url: String?

    @Option(help: "The hub's bearer token.")
    var token: String

    @Option(help: "Start after this event id (0: everything the hub kept); default: what arrives from now on.")
    var since: Int64?

    @Flag(help: "Raise a desktop notification for each event.")
    var notify = false

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

/// Desktop notifications through `notify-send`.
struct DesktopNotifier: Sendable {
    let executable: String

    init() throws {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        let candidates = path.split(separator: ":").map { "\($0)/notify-send" }
        guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw EarshotError.invalidArgument("--notify needs notify-send (apt install libnotify-bin)")
        }
        executable = found
    }

    /// Alerts are critical (they stay until dismissed); other events normal; events that came
    /// while the hub was snoozed or in quiet hours raise nothing.
    func show(_ json: String) {
        guard let object = try? JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any],
              let label = object["label"] as? String, let kind = object["kind"] as? String,
              object["quiet"] as? Bool != true else { return }
        let name = label.replacingOccurrences(of: "_", with: " ")
        var body = kind
        if let source = object["source"] as? String { body += " at \(source)" }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = ["--app-name=Earshot", "--urgency=\(kind == "alert" ? "critical" : "normal")", "Earshot: \(name)", body]
        try? process.run()
    }
}
