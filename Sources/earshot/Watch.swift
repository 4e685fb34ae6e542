import ArgumentParser
import EarshotAlerts
import EarshotCore
import EarshotHub
import EarshotHubClient
import EarshotIO
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
    @OptionGroup var store: SoundsCommand.StoreOption

    @Option(help: "Seconds after an announcement before the same sound or alert is announced again.")
    var cooldown = 30.0

    @Option(help: "HH:MM-HH:MM, local time: sounds are quiet in these hours (alerts never are).")
    var quietHours: String?

    @Option(help: "jsonl (one JSON object per event) or text.")
    var format: EventFormat = .jsonl

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
        let folder = store.store ?? DataDirectory.path
        let soundStore = try store.open()
        let network = alerts ? try AlertNetwork.bundled() : nil
        let listening = try Listening(network: network, alertSettings: try network.map(sensitivity.settings), store: sounds ? soundStore : nil)
        if sounds && listening.soundNames.isEmpty && !alerts {
            throw EarshotError.invalidArgument("no sounds are enrolled (earshot sounds enroll NAME FILE) and --no-alerts leaves nothing to listen for")
        }
        let announcer = try Announcer(
            format: format, cooldown: cooldown, quietHours: try quietHours.map(Self.parse), hub: hub,
            spool: (folder as NSString).appendingPathComponent("watch-spool.jsonl"), mqtt: mqtt, soundLabels: listening.soundNames)
        defer { announcer.close() }
        listening.announcer = announcer
        Terminal.note("listening for \(describe(listening))")
        installInterruptHandler()
        signal(SIGTERM) { _ in interruptRequested.store(true, ordering: .relaxed) }
        if let file {
            let samples = try MatchingAudio(path: file).samples
            let started = Date()
            for start in stride(from: 0, to: samples.count, by: Listening.blockFrames) where !interruptRequested.load(ordering: .relaxed) {
                listening.hear(samples[start..<min(samples.count, start + Listening.blockFrames)], sessionStart: started)
            }
            listening.finish()
        } else {
            try watchMicrophone(listening)
        }
    }

    private func describe(_ listening: Listening) -> String {
        let names = listening.soundNames.isEmpty ? (sounds ? ["no enrolled sounds yet"] : []) : listening.soundNames
        return ((alerts ? ["alerts"] : []) + names).joined(separator: ", ")
    }

    /// Capture until stopped; when the device goes, wait for it and carry on.
    private func watchMicrophone(_ listening: Listening) throws {
        let feed = try hub.address().map { LiveFeed(address: $0, sampleRate: Listening.sampleRate) }
        defer { feed?.close() }
        let buffer = AudioBuffer(channelCount: 1, capacityFrames: Listening.blockFrames)
        var everOpened = false, saidWaiting = false
        while !interruptRequested.load(ordering: .relaxed) {
            let capture: DeviceCapture, source: AudioSource
            do {
                if everOpened { try AudioDevices.rescan() }
                (capture, source) = try openMicrophone()
            } catch let error as EarshotError {
                guard everOpened else { throw error }  // at start, a wrong device is the user's to fix
                if !saidWaiting { Terminal.note("waiting for the microphone (\(error))") }
                saidWaiting = true
                for _ in 0..<20 where !interruptRequested.load(ordering: .relaxed) { usleep(100_000) }
                continue
            }
            if everOpened { Terminal.note("the microphone is back") }
            everOpened = true
            saidWaiting = false
            listening.restart()
            let started = Date()
            do {
                while !interruptRequested.load(ordering: .relaxed) {
                    var block = buffer.block(frameCount: Listening.blockFrames)
                    guard try source.read(into: block) == block.frameCount else { break }
                    feed?.tap.process(&block)
                    listening.hear(ArraySlice(block.channel(0)), sessionStart: started)
                    feed?.pump(alerting: listening.isAlerting)
                }
            } catch let error as EarshotError {
                Terminal.note("lost the microphone (\(error)); waiting for it")
                saidWaiting = true
            }
            capture.close()
            listening.finish()
        }
    }
}

extension Watch {
    /// The microphone at 16 kHz, or at its own rate resampled when it cannot give 16 kHz itself.
    func openMicrophone() throws -> (DeviceCapture, AudioSource) {
        let device = try inputDevice.find(), rate = Listening.sampleRate
        do {
            let capture = try DeviceCapture(device: device, sampleRate: rate, channelCount: 1, stop: interruptRequested, stallSeconds: 3)
            return (capture, capture)
        } catch EarshotError.deviceFailure {
            let capture = try DeviceCapture(device: device, sampleRate: device.defaultSampleRate, channelCount: 1, stop: interruptRequested, stallSeconds: 3)
            return (capture, try ResampledSource(capture, sampleRate: rate, inputBlockFrames: Int(device.defaultSampleRate / 10)))
        }
    }
}

/// The detectors, fed 100 ms at a time: the alert detector, the enrolled sounds (reloaded when
/// the store changes) and the last seconds of audio, kept for the not-my-doorbell button.
final class Listening {
    static let sampleRate = 16_000.0
    static let blockFrames = 1600
    /// Heard audio kept: the longest sound announced is rarely longer.
    static let historySeconds = 12.0

    private let alertDetector: AlertDetector?
    private let store: SoundStore?
    private var soundDetector: SoundDetector?
    private var revision: String?
    private var lastCheck = Date()
    private var history: [Float] = []
    private var heardSamples = 0
    /// Sounds announced and still sounding: their event keys, to keep what was heard at the end.
    private var sounding: [String: String] = [:]
    /// The alert detector's generic doorbell, held a moment while sounds are enrolled: when the
    /// user's own doorbell is recognised too, its name is announced and the generic one is not.
    private var heldDoorbell: (event: AlertEvent, sessionStart: Date, heldAt: Double)?
    private var lastEnrolledSound = -Double.infinity
    static let doorbellHoldSeconds = 1.0
    var announcer: Announcer?

    init(network: AlertNetwork?, alertSettings: AlertEventTracker.Settings?, store: SoundStore?) throws {
        alertDetector = network.map { AlertDetector(network: $0, settings: alertSettings) }
        try alertDetector?.prepare(ProcessSpec(sampleRate: Self.sampleRate, maximumBlockFrames: Self.blockFrames, channelCount: 1))
        self.store = store
        try reloadSounds()
    }

    var soundNames: [String] { soundDetector?.sounds.map(\.name) ?? [] }
    var isAlerting: Bool { alertDetector?.isAlerting ?? false }

    /// A new stream (the device came back): its clock starts again at zero.
    func restart() {
        alertDetector?.reset()
        soundDetector = soundDetector.map { SoundDetector(sounds: $0.sounds, embedding: $0.embedding) }
        history.removeAll(keepingCapacity: true)
        heardSamples = 0
        sounding = [:]
        heldDoorbell = nil
        lastEnrolledSound = -.infinity
    }

    private var now: Double { Double(heardSamples) / Self.sampleRate }

    func hear(_ samples: ArraySlice<Float>, sessionStart: Date) {
        history.append(contentsOf: samples)
        heardSamples += samples.count
        let kept = Int(Self.historySeconds * Self.sampleRate)
        if history.count > 2 * kept { history.removeFirst(history.count - kept) }
        if let alertDetector {
            var copy = Array(samples)
            copy.withUnsafeMutableBufferPointer { pointer in
                var block = AudioBlock(base: pointer.baseAddress!, channelCount: 1, frameCount: pointer.count, channelStride: pointer.count)
                alertDetector.process(&block)
            }
            alertDetector.takeChanges { self.alertChanged($0, sessionStart: sessionStart) }
        }
        if let soundDetector {
            let ended = soundDetector.push(samples) { began in
                lastEnrolledSound = now
                heldDoorbell = nil
                if let key = announcer?.announce(kind: .sound, label: began.sound, time: sessionStart.addingTimeInterval(began.start), confidence: began.score) {
                    sounding[began.sound] = key
                }
            }
            for detection in ended { keepHeard(detection) }
        }
        if let held = heldDoorbell, now - held.heldAt >= Self.doorbellHoldSeconds { releaseDoorbell() }
        if Date().timeIntervalSince(lastCheck) >= 5 {
            lastCheck = Date()
            do { try reloadSounds() } catch { Terminal.note("warning: cannot reload the enrolled sounds: \(error)") }
        }
    }

    /// The end of a stream: what is still sounding ends.
    func finish() {
        releaseDoorbell()
        alertDetector?.finish { alertChanged($0, sessionStart: Date()) }
        for detection in soundDetector?.finish() ?? [] { keepHeard(detection) }
    }

    private func alertChanged(_ change: AlertEventTracker.Change, sessionStart: Date) {
        switch change {
        case .began(let event) where event.alertClass == .doorbell && soundDetector != nil:
            // Recognised as an enrolled sound a moment ago: already announced by its name.
            if now - lastEnrolledSound > Self.doorbellHoldSeconds { heldDoorbell = (event, sessionStart, now) }
            announcer?.alertSounding(true)
        case .began(let event):
            announcer?.announce(kind: .alert, label: event.alertClass.rawValue, time: sessionStart.addingTimeInterval(event.start), confidence: event.confidence)
            announcer?.alertSounding(true)
        case .ended:
            announcer?.alertSounding(false)
        }
    }

    /// A held doorbell no enrolled sound claimed: announced, with the time it began.
    private func releaseDoorbell() {
        guard let (event, sessionStart, _) = heldDoorbell else { return }
        heldDoorbell = nil
        announcer?.announce(kind: .alert, label: event.alertClass.rawValue, time: sessionStart.addingTimeInterval(event.start), confidence: event.confidence)
    }

    /// From a second and a half before the announcement to the end of the sound.
    private func keepHeard(_ detection: SoundDetection) {
        guard let key = sounding.removeValue(forKey: detection.sound), let store else { return }
        let now = Double(heardSamples) / Self.sampleRate
        let seconds = min(Self.historySeconds, now - detection.start + 1.5)
        let clip = Array(history.suffix(Int(seconds * Self.sampleRate)))
        do { try store.keepHeard(key: key, sound: detection.sound, samples: clip) } catch {
            Terminal.note("warning: cannot keep what was heard: \(error)")
        }
    }

    private func reloadSounds() throws {
        guard let store else { return }
        let now = try store.revision()
        guard now != revision else { return }
        let embedding = try SoundEmbedding.bundled()
        let loaded = try store.loadSounds(threshold: nil, embedding: embedding)
        if revision != nil { Terminal.note("enrolled sounds changed: \(loaded.map(\.name).joined(separator: ", "))") }
        revision = now
        // A sound mid-announcement keeps its key; a removed one is forgotten.
        sounding = sounding.filter { name, _ in loaded.contains { $0.name == name } }
        soundDetector = loaded.isEmpty ? nil : SoundDetector(sounds: loaded, embedding: embedding)
    }
}

/// Where events go, and whether they go: cooldown per label, quiet hours and the hub's snooze
/// for sounds; stdout always, the hub (spooled) and MQTT as configured.
final class Announcer {
    let format: EventFormat
    let cooldown: Double
    let quietHours: QuietHours?
    private let poster: HubPoster?
    private let hubQuiet: HubQuietFollower?
    private let bridge: HomeAssistantBridge?
    private var lastAnnounced: [String: Date] = [:]

    init(format: EventFormat, cooldown: Double, quietHours: QuietHours?, hub: HubOptions, spool: String,
         mqtt: MQTTOptions, soundLabels: [String]) throws {
        self.format = format
        self.cooldown = cooldown
        self.quietHours = quietHours
        if let address = try hub.address() {
            let poster = HubPoster(address: address, source: ProcessInfo.processInfo.hostName, spool: spool)
            poster.warn = { Terminal.note("warning: \($0)") }
            if poster.pending > 0 { Terminal.note("sending \(poster.pending) event(s) kept from an earlier run") }
            self.poster = poster
            hubQuiet = HubQuietFollower(address: address)
        } else {
            poster = nil
            hubQuiet = nil
        }
        bridge = try mqtt.bridge(extraLabels: soundLabels)
    }

    /// Announces an event unless its label is cooling down; returns its key when announced.
    @discardableResult
    func announce(kind: EventKind, label: String, time: Date, confidence: Double) -> String? {
        if let last = lastAnnounced[label], time.timeIntervalSince(last) < cooldown { return nil }
        lastAnnounced[label] = time
        let quiet = kind != .alert && (HubSettings(quietHours: quietHours).isQuiet(kind, at: time) || (hubQuiet?.isQuiet ?? false))
        let key = poster?.submit(kind: kind, label: label, time: time, confidence: confidence) ?? UUID().uuidString
        if !quiet { bridge?.publishEvent(kind: kind.rawValue, label: label, time: time, confidence: confidence) }
        let stamp = StoredEvent.iso8601(time.timeIntervalSince1970)
        switch format {
        case .jsonl:
            print(String(format: #"{"kind":"%@","label":"%@","time":"%@","confidence":%.2f,"quiet":%@}"#,
                         kind.rawValue, label, stamp, confidence, quiet ? "true" : "false"))
        case .text:
            print(String(format: "%@  %@ %@ (%.2f)%@", stamp, kind.rawValue, label, confidence, quiet ? "  [quiet]" : ""))
        }
        fflush(nil)  // each event as it is announced, even into a pipe
        return key
    }

    /// Home Assistant's sound sensor: on while an alert sounds.
    func alertSounding(_ on: Bool) { bridge?.publishSound(on) }

    func close() {
        hubQuiet?.close()
        if let poster {
            let unsent = poster.close(waitingUpTo: 5)
            if unsent > 0 { Terminal.note("\(unsent) event(s) not yet stored by the hub are kept in \(poster.spool ?? "memory") for the next run") }
        }
        bridge?.close()
    }
}
