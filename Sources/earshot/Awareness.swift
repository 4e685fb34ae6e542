import ArgumentParser
import EarshotAlerts
import EarshotCore
import EarshotHub
import EarshotHubClient
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

    @Argument(help: "A recording to watch instead of the microphone, read as fast as it can be.") var file: String?
    @OptionGroup var inputDevice: InputDeviceOption
    @Flag(inversion: .prefixedNo, help: "Listen for sirens, smoke alarms, car horns and doorbells.") var alerts = true
    @Flag(inversion: .prefixedNo, help: "Listen for the enrolled sounds.") var sounds = true
    @OptionGroup var sensitivity: AlertSensitivityOptions
    @OptionGroup var data: DataFolderOption
    @Option(help: "Seconds after an announcement before the same sound or alert is announced again.") var cooldown = 30.0
    @Option(help: "HH:MM-HH:MM, local time: sounds are quiet in these hours (alerts never are).") var quietHours: String?
    @Option(help: OutputStyle.help) var format: OutputStyle = .jsonl
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

/// `earshot sounds`: the user's own sounds (the doorbell, the washing machine's end beep).
struct SoundsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sounds", abstract: "Enroll your own sounds (a doorbell, an appliance's beep) and list or remove them.",
        subcommands: [Enroll.self, List.self, Remove.self, Detect.self, Reject.self])

    struct Enroll: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Enroll a sound from one to three recordings of it.",
            discussion: """
                Each recording (any format, rate and channels) should hold the whole sound with a \
                moment of quiet around it. A recording that is too short, silent, clipped or holds \
                no sound standing out from its background is refused with the reason. --room-tone \
                adds a recording of the place without the sound, as evidence of what is not it.
                """)

        @Argument(help: "A name for the sound, like front_door.") var name: String
        @Argument(help: "One to three recordings of the sound.") var files: [String]
        @Option(help: "A recording of the room without the sound.") var roomTone: String?
        @OptionGroup var data: DataFolderOption

        func validate() throws {
            do { try SoundStore.validate(name: name) } catch let error as EarshotFailure { throw ValidationError(Terminal.sentence(for: error)) }
            guard (1...3).contains(files.count) else { throw ValidationError("give one to three recordings of the sound, not \(files.count)") }
        }

        func run() throws {
            let clips = try data.openSounds().enroll(name, recordings: files, roomTone: roomTone)
            let details = clips.map { String(format: "%.2f s, %.0f dB above its background", $0.soundSeconds, $0.contrastDB) }
            print("enrolled '\(name)' from \(clips.count) recording(s): \(details.joined(separator: "; "))\(roomTone == nil ? "" : ", with room tone")")
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the enrolled sounds.")

        @Option(help: OutputStyle.help) var format: OutputStyle = .text
        @OptionGroup var data: DataFolderOption

        func run() throws {
            let sounds = try data.openSounds().summaries()
            if format.isJSON { return try Terminal.printJSON(sounds) }
            if sounds.isEmpty { print("no sounds enrolled (earshot sounds enroll NAME FILE)") }
            for sound in sounds {
                let extras = [sound.roomTone ? "room tone" : nil, sound.rejected > 0 ? "\(sound.rejected) rejected" : nil].compactMap { $0 }
                print("\(sound.name)  \(sound.recordings) recording(s)\(extras.isEmpty ? "" : ", " + extras.joined(separator: ", "))  enrolled \(sound.enrolled)")
            }
        }
    }

    struct Detect: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Find the enrolled sounds in a recording.",
            discussion: """
                One line per detection; start is when it was announced. json: \
                {"confidence":0.81,"end":13.1,"kind":"sound","label":"front_door","start":12.34}, \
                with the former names sound and score beside label and confidence for one release.
                """)

        @Argument(help: "A recording (any format, rate and channels).") var file: String
        @Option(help: OutputStyle.help) var format: OutputStyle = .text
        @Option(help: "Announce at this score (0–1) instead of each sound's calibrated threshold.") var threshold: Double?
        @Option(help: "combined (the learned sound matcher and tonal templates, as watch listens; the default), embedding or template (either alone), landmarks (time-consistent tonal landmarks) or peaks (the original two-strongest-peaks method); all but the first to compare.")
        var method: SoundSearch.Method = .combined
        @Option(help: .hidden) var trace: String?
        @OptionGroup var data: DataFolderOption

        func validate() throws {
            if let threshold, !(0...1).contains(threshold) { throw ValidationError("--threshold must be 0–1, not \(threshold)") }
        }

        func run() throws {
            let store = try data.openSounds()
            guard !(try store.summaries().isEmpty) else { throw HubError.noSoundsEnrolled }
            let samples = try MatchingAudio(path: file).samples
            if let trace, method == .combined || method == .embedding {
                let (csv, notes) = try SoundSearch.scoreTable(of: samples, store: store, threshold: threshold)
                try AtomicFile.write(Data(csv.utf8), to: trace)
                notes.forEach(Terminal.note)
            }
            report(try SoundSearch.find(in: samples, store: store, method: method, threshold: threshold))
        }

        private func report(_ found: [SoundDetection]) {
            for detection in found {
                switch format {
                case .json, .jsonl:
                    print(EventRecord(kind: .sound, label: detection.sound, start: detection.start, end: detection.end,
                                      confidence: detection.score, formerNames: .sound).jsonLine)
                case .text:
                    print(String(format: "%8.2f s  %@ (score %.2f)", detection.start, detection.sound, detection.score))
                }
            }
        }
    }

    struct Reject: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Not my doorbell: keep a false alarm as evidence of what the sound is not.",
            discussion: "The sound's threshold is raised above what the recording scores, so the same false alarm does not come back.")

        @Argument(help: "The sound that was wrongly announced.") var name: String
        @Argument(help: "A recording of what set it off (up to 30 s).") var file: String
        @OptionGroup var data: DataFolderOption

        func run() throws {
            let (before, after) = try data.openSounds().reject(file, for: name)
            print(String(format: "'%@' will not be announced for this again (threshold %.2f, was %.2f)", name, after, before))
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove an enrolled sound and its recordings.")

        @Argument(help: "The sound's name.") var name: String
        @OptionGroup var data: DataFolderOption

        func run() throws {
            guard try data.openSounds().remove(name) else { throw HubError.noSuchSound(name) }
            print("removed '\(name)'")
        }
    }
}

extension SoundSearch.Method: ExpressibleByArgument {}
