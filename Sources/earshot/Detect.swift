import ArgumentParser
import EarshotAlerts
import EarshotCore
import EarshotIO
import EarshotListening
import Foundation

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

    @Argument(help: "The recording (any rate; channels are mixed).")
    var input: String

    @Option(help: OutputStyle.help)
    var format: OutputStyle = .text

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
        let settings = try alerts.settings(for: network)
        let reader = try AudioFileReader(path: input)
        let source: AudioSource = reader.sampleRate == AlertFeatures.sampleRate
            ? reader : try ResampledSource(reader, sampleRate: AlertFeatures.sampleRate)
        let detector = AlertDetector(network: network, settings: settings)
        let chain = detector
        let runner = Runner(blockFrames: 1600, progress: { _ in detector.takeChanges(report) })
        try runner.run(source: source, chain: chain, sink: DiscardingSink())
        detector.finish(report)
        fanOut.finish()
        // Silence would read as a failure: say that the whole recording was heard (on stderr, so
        // the output stays one line per event).
        if found == 0 {
            Terminal.note(String(format: "No alerts (siren, smoke alarm, car horn, doorbell) in %@ (%.1f s heard).", input, reader.info.durationSeconds))
        }
    }
}
