import ArgumentParser
import EarshotAlerts
import EarshotCore
import EarshotHub
import EarshotHubClient
import EarshotIO
import EarshotListening
import EarshotSounds
import Foundation

/// `earshot watch`: the listening daemon by the door. The microphone goes to the alert
/// detector and to every enrolled sound; what they hear goes out as events.
struct Watch: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Listen for alerts and your own sounds, for days, and tell the user's other devices.",
        discussion: """
            The microphone, at 16 kHz mono, goes to the alert detector (sirens, smoke alarms, \
            horns, doorbells) and to every enrolled sound. Each event is a JSON line on stdout as \
            it is announced: {"kind":"sound","label":"front_door","time":"…","confidence":0.81,"quiet":false}. \
            With --hub it is posted to the hub (kept in a spool file in the data folder until the \
            hub has it, across restarts), and with --mqtt published for Home Assistant; --hub also \
            feeds the dashboard's live view. A sound or alert class is announced at most once per \
            --cooldown. Sounds (never alerts) are quiet during --quiet-hours and while the hub is \
            snoozed or in its own quiet hours: printed and sent to the hub marked quiet, not \
            published to MQTT. When the microphone stops (unplugged, its sound server restarted) \
            watch says so and waits for it to come back. Enrolled sounds are reloaded when they \
            change (sounds enroll, remove, reject, the dashboard's not-my-doorbell button), and \
            what was heard with each sound is kept for that button. Ctrl-C or SIGTERM stops.
            """)

    @Argument(help: "A recording to watch instead of the microphone, read as fast as it can be.")
    var file: String?

    @OptionGroup var inputDevice: InputDeviceOption

    @Flag(inversion: .prefixedNo, help: "Listen for sirens, smoke alarms, car horns and doorbells.")
    var alerts = true

    @Flag(inversion: .prefixedNo, help: "Listen for the enrolled sounds.")
    var sounds = true

    @OptionGroup var sensitivity: AlertSensitivityOptions
    @OptionGroup var data: DataFolderOption

    @Option(help: "Seconds after an announcement before the same sound or alert is announced again.")
    var cooldown = 30.0

    @Option(help: "HH:MM-HH:MM, local time: sounds are quiet in these hours (alerts never are).")
    var quietHours: String?

    @Option(help: OutputStyle.help)
    var format: OutputStyle = .jsonl

    @OptionGroup var hub: HubOptions
    @OptionGroup var mqtt: MQTTOptions

    func validate() throws {
        guard cooldown.isFinite, (0...86_400).contains(cooldown) else { throw ValidationError("--cooldown must be 0–86400 seconds, not \(cooldown)") }
        if let quietHours { _ = try Self.parse(quietHours: quietHours) }
        if !alerts && !sounds { throw ValidationError("--no-alerts and --no-sounds leave nothing to listen for") }
    }

    static func parse(quietHours text: String) throws -> QuietHours {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        do {
            guard parts.count == 2 else { throw HubRequestError("") }
            return try QuietHours(start: String(parts[0]), end: String(parts[1]))
        } catch {
            throw ValidationError("--quiet-hours must be HH:MM-HH:MM, like 22:00-07:00, not '\(text)'")
        }
    }

    func run() throws {
        let folder = data.folder
        let soundStore = try data.openSounds()
        let network = alerts ? try AlertNetwork.bundled() : nil
        let listening = try Listening(network: network, alertSettings: try network.map(sensitivity.settings), store: sounds ? soundStore : nil)
        listening.note = { Terminal.note($0) }
        if sounds && listening.soundNames.isEmpty && !alerts {
            throw EarshotError.invalidArgument("no sounds are enrolled (earshot sounds enroll NAME FILE) and --no-alerts leaves nothing to listen for")
        }
        var poster: HubPoster?, hubQuiet: HubQuietFollower?
        if let address = try hub.address() {
            let spooled = HubPoster(address: address, source: ProcessInfo.processInfo.hostName,
                                    spool: (folder as NSString).appendingPathComponent("watch-spool.jsonl"))
            spooled.warn = { Terminal.note("warning: \($0)") }
            if spooled.pending > 0 { Terminal.note("sending \(spooled.pending) event(s) kept from an earlier run") }
            poster = spooled
            hubQuiet = HubQuietFollower(address: address)
        }
        // Watching a file, each line also says where in it the event is.
        let started = Date(), format = format, watchesFile = file != nil
        let fanOut = EventFanOut(poster: poster, hubQuiet: hubQuiet, bridge: try mqtt.bridge(extraLabels: listening.soundNames),
                                 cooldown: cooldown, quietHours: try quietHours.map(Self.parse),
                                 write: { format.print($0, position: watchesFile ? $0.time.timeIntervalSince(started) : nil) })
        defer {
            let unsent = fanOut.close(waitingUpTo: 5)
            if unsent > 0 { Terminal.note("\(unsent) event(s) not yet stored by the hub are kept in \(poster?.spool ?? "memory") for the next run") }
        }
        listening.fanOut = fanOut
        Terminal.note("listening for \(describe(listening))")
        installInterruptHandler()
        signal(SIGTERM) { _ in interruptRequested.store(true, ordering: .relaxed) }
        if let file {
            try listening.hear(file: file, sessionStart: started, stop: interruptRequested)
        } else {
            try listening.hear(microphone: inputDevice.find, hub: try hub.address(), stop: interruptRequested)
        }
    }

    private func describe(_ listening: Listening) -> String {
        let names = listening.soundNames.isEmpty ? (sounds ? ["no enrolled sounds yet"] : []) : listening.soundNames
        return ((alerts ? ["alerts"] : []) + names).joined(separator: ", ")
    }
}
