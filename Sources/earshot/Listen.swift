import ArgumentParser
import EarshotAlerts
import EarshotCore
import EarshotEnhance
import EarshotHearingAid
import EarshotHubClient
import EarshotIO
import EarshotListening
import EarshotSynthesis
import Foundation

/// `earshot listen`: the hearing-aid path, microphone to headphones: noise reduced, alerts
/// detected, announced and kept out of the noise reduction.
struct Listen: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Listen through Earshot: from an input device (or a file) to headphones (or a file).",
        discussion: """
            The chain: alert detector → noise suppressor, which lets a detected alert's tonal \
            components through → output guard. Events are printed on stderr as they begin and \
            end; --events also writes them as JSON lines. Live, the chain runs at 48 kHz inside \
            the device callback (one duplex stream where the host allows it), with the \
            suppressor's 7.9 ms delay plus the devices' own buffers, which --latency picks; the \
            playback is kept at a fixed fill, so the delay never grows. Ctrl-C stops. Nothing \
            reaches the output above --max-output-dbfs. With --audiogram, the noise reduction \
            is a hearing aid's (per band of the fitting and slowly, at most 6 dB, and only on \
            noise loud enough to matter), the listener's amplification (see 'earshot fit') \
            follows it inside the same 7.9 ms, one microphone feeding both ears, and a limiter \
            inside that delay keeps them under --max-output-dbspl.
            """)

    @Argument(help: "A file to listen to instead of the input device.") var input: String?
    @Option(name: .shortAndLong, help: "Write to this file instead of the output device.") var output: String?
    @OptionGroup var inputDevice: InputDeviceOption
    @OptionGroup var outputDevice: OutputDeviceOption
    @Option(help: "Device buffers, live: low (a hearing aid's delay) or normal (safer on a busy machine).") var latency: LiveLatency = .low
    @Flag(inversion: .prefixedNo, help: "Reduce background noise.") var enhance = true
    @Flag(inversion: .prefixedNo, help: "Listen for sirens, smoke alarms, car horns and doorbells.") var alerts = true
    @Flag(inversion: .prefixedNo, help: "Keep detected alerts out of the noise reduction.") var separate = true
    @OptionGroup var sensitivity: AlertSensitivityOptions
    @Option(help: "Also write every event to this file, one JSON object per line.") var events: String?
    @OptionGroup var hub: HubOptions
    @OptionGroup var mqtt: MQTTOptions
    @OptionGroup var suppression: SuppressorOptions
    @OptionGroup var ceiling: OutputCeilingOption
    @OptionGroup var fitting: FittingOptions
    @Flag(help: "Print the chain, and live the measured delay and glitches every 10 s.") var verbose = false

    func run() throws {
        try OutputPath.refuseOverwriting(output, inputs: [input])
        try OutputPath.refuseOverwriting(events, inputs: [input])
        let network = alerts ? try AlertNetwork.bundled() : nil
        let fit = try fitting.fitting(), profile = try fitting.profile()
        let ceilingDBFS = min(ceiling.maxOutputDbfs, try fit?.ceilingDBFS(calibration: profile) ?? 0)
        if let note = try fit?.unreachableOutputNote(calibration: profile, limitDBFS: ceilingDBFS) { Terminal.note("note: \(note)") }
        let chain = try ListeningChain(
            enhance: enhance, model: suppression.model, strengthDB: suppression.strength, detector: network,
            alertSettings: try network.map(sensitivity.settings), separate: separate,
            amplification: try fit?.compression(calibration: profile), maximumOutputDBFS: ceilingDBFS)
        let fanOut = EventFanOut(poster: try hub.poster(), bridge: try mqtt.bridge())
        let started = Date()
        installInterruptHandler()
        let run = ListeningRun(chain: chain, twoEars: fitting.audiogram != nil, stop: interruptRequested, status: verbose ? { Terminal.note($0) } : nil) { change in
            switch change {
            case .began(let event): Terminal.note(String(format: "%.2f s: %@ (confidence %.2f)", event.start, event.alertClass.rawValue, event.confidence))
            case .ended(let event): Terminal.note(String(format: "%.2f s: %@ ended", event.end, event.alertClass.rawValue))
            }
            fanOut.alert(change, from: started)
        }
        switch (input, output) {
        case (nil, nil):
            try run.live(from: try inputDevice.find(), to: try outputDevice.find(), latency: latency, hub: try hub.address())
        case (let input, let output):
            reportClipping(try run.run(from: try input.map { .file($0) } ?? .device(try inputDevice.find()),
                                       to: try output.map { .file($0) } ?? .device(try outputDevice.find())))
        }
        run.finish()
        fanOut.finish()
        if let events {
            try AtomicFile.write(Data(run.heard.map { EventRecord($0).jsonLine + "\n" }.joined().utf8), to: events)
        }
    }
}

/// `earshot detect`: the alerts in a recording, one line per event.
struct Detect: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Find sirens, smoke alarms, car horns and doorbells in a recording.",
        discussion: """
            Prints one line per event as the stream reaches its end: with --format jsonl, \
            {"class":"siren","start":12.34,"end":17.80,"confidence":0.97}. start is when the \
            detector announced the alert (a live listener would have been told then), end the last \
            moment it was heard, in seconds from the start of the input. With --hub, each alert \
            also goes to the hub as it is announced (queued, retried while the hub is away); with \
            --mqtt, to Home Assistant.
            """)

    @Argument(help: "The recording (any rate; channels are mixed).") var input: String
    @Option(help: OutputStyle.help) var format: OutputStyle = .text
    @OptionGroup var alerts: AlertSensitivityOptions
    @OptionGroup var hub: HubOptions
    @OptionGroup var mqtt: MQTTOptions

    func run() throws {
        let fanOut = EventFanOut(poster: try hub.poster(), bridge: try mqtt.bridge())
        let started = Date()
        var found = 0
        func report(_ change: AlertEventTracker.Change) {
            if case .began = change { found += 1 }
            format.print(change)
            fanOut.alert(change, from: started)
        }
        let network = try AlertNetwork.bundled()
        let seconds = try AlertDetector.hear(file: input, network: network, settings: try alerts.settings(for: network), changes: report)
        fanOut.finish()
        // Silence would read as a failure: say that the whole recording was heard (on stderr, so
        // the output stays one line per event).
        if found == 0 {
            Terminal.note(String(format: "No alerts (siren, smoke alarm, car horn, doorbell) in %@ (%.1f s heard).", input, seconds))
        }
    }
}

/// `earshot enhance IN -o OUT`: noise reduction for clearer speech.
struct Enhance: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Reduce background noise in speech, at hearing-aid delay (under 10 ms).",
        discussion: """
            Each channel is processed on its own. The suppressor runs at 16 or 48 kHz; other rates \
            are resampled on the way in and back on the way out. The background is learned from the \
            start ("noise training") and tracked throughout. For files and \
            pipes the delay is compensated, so output lines up with input.
            """)

    @Argument(help: "Input file, or - for raw PCM on stdin.") var input: String
    @Option(name: .shortAndLong, help: "Output file, or - for raw PCM on stdout.") var output: String
    @OptionGroup var suppression: SuppressorOptions
    @Flag(help: "Print the processing chain and its delay on stderr.") var verbose = false
    @OptionGroup var raw: RawStreamOptions

    func run() throws {
        try OutputPath.refuseOverwriting(output, inputs: [input])
        let suppressor = try NoiseSuppressor(model: suppression.model, strengthDB: suppression.strength)
        let source = try raw.endpoints.openSource(input)
        let run = NativeRateRun(source: source, output: output, endpoints: raw.endpoints, channelCount: source.channelCount,
                                nativeRate: NoiseSuppressor.nativeRate(for: source.sampleRate))
        let latency = try run.run("Enhancing", suppressor)
        let rate = source.sampleRate, native = run.nativeRate
        if verbose {
            let milliseconds = Double(latency) / native * 1000
            var chain = "\(suppression.model) noise suppressor at \(Int(native)) Hz: \(latency) samples = \(String(format: "%.2f", milliseconds)) ms algorithmic delay"
            if native != rate { chain = "soxr \(Int(rate))→\(Int(native)) Hz → " + chain + " → soxr back to \(Int(rate)) Hz (phase-aligned)" }
            Terminal.note(chain + "; compensated in the output")
        }
        if output != "-" {
            Terminal.note("Enhanced \(input) → \(output) (\(suppression.model) suppressor, at most \(String(format: "%g", suppression.strength)) dB of reduction)")
        }
    }
}

/// `earshot demo`: the listening chain end to end on the bundled scene (`ListeningDemo`).
struct Demo: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the listening chain on Earshot's bundled scene and report what it hears.")

    @Option(help: "Scene seed: the same seed always gives the same scene.") var seed: UInt64 = 9
    @Option(name: .shortAndLong, help: "Keep the scene as this file (default: a temporary file, removed afterwards).") var output: String?
    @Option(help: OutputStyle.help) var format: OutputStyle = .text

    struct Report: Codable {
        var scenePath: String?, sampleRate: Double, durationSeconds: Double, latencySamples: Int
        var alerts: [ListeningDemo.Alert], events: [EventRecord]
    }

    func run() throws {
        let rate = ListeningDemo.sampleRate
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("earshot-demo-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        if format == .text {
            print("Earshot \(Earshot.version) demo — scene seed \(seed): \(Int(ListeningDemo.durationSeconds)) s at \(Int(rate)) Hz; chain: alert detector → noise suppressor with alert separation")
            print("Heard as it played:")
        }
        let demo = try ListeningDemo(seed: seed, sceneFile: output ?? directory.appendingPathComponent("scene.wav").path) { change in
            if case .began(let event) = change, format == .text {
                print(String(format: "  %6.2f s  %@ (confidence %.2f)", event.start, event.alertClass.rawValue, event.confidence))
            }
        }
        if format.isJSON {
            return try Terminal.printJSON(Report(scenePath: output, sampleRate: rate, durationSeconds: demo.durationSeconds, latencySamples: demo.latencySamples,
                                                 alerts: demo.alerts, events: demo.events.map(EventRecord.init)))
        }
        print("Placed in the scene, and what reached the output (level out − in over the alert):")
        print("  start–end s      class         SNR    detected  alert kept  without separator  speech+noise")
        for alert in demo.alerts {
            print(String(format: "  %5.2f–%5.2f  ", alert.start, alert.end) + alert.class.padding(toLength: 12, withPad: " ", startingAt: 0)
                  + String(format: "  %+5.1f dB  %@  %+6.1f dB   %+6.1f dB          %+6.1f dB",
                           alert.snr, alert.detected ? "yes     " : "no      ", alert.keptDB, alert.keptWithoutSeparatorDB, alert.restDB))
        }
        print(String(format: "Chain delay %.1f ms.", Double(demo.latencySamples) / rate * 1000))
        if let output {
            print("Scene kept at \(output). Try: earshot listen \(shellWord(output)) -o out.wav --events events.jsonl")
        } else {
            print("Try it yourself: earshot demo -o scene.wav keeps the scene; then earshot listen scene.wav -o out.wav --events events.jsonl")
        }
    }
}
