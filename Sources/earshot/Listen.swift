import ArgumentParser
import EarshotAlerts
import EarshotCore
import EarshotDSP
import EarshotEnhance
import EarshotHearingAid
import EarshotHubClient
import EarshotIO
import EarshotListening
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

    @Argument(help: "A file to listen to instead of the input device.")
    var input: String?

    @Option(name: .shortAndLong, help: "Write to this file instead of the output device.")
    var output: String?

    @OptionGroup var inputDevice: InputDeviceOption
    @OptionGroup var outputDevice: OutputDeviceOption

    @Option(help: "Device buffers, live: low (a hearing aid's delay) or normal (safer on a busy machine).")
    var latency: LiveLatency = .low

    @Flag(inversion: .prefixedNo, help: "Reduce background noise.")
    var enhance = true

    @Flag(inversion: .prefixedNo, help: "Listen for sirens, smoke alarms, car horns and doorbells.")
    var alerts = true

    @Flag(inversion: .prefixedNo, help: "Keep detected alerts out of the noise reduction.")
    var separate = true

    @OptionGroup var sensitivity: AlertSensitivityOptions

    @Option(help: "Also write every event to this file, one JSON object per line.")
    var events: String?

    @OptionGroup var hub: HubOptions
    @OptionGroup var mqtt: MQTTOptions
    @OptionGroup var suppression: SuppressorOptions
    @OptionGroup var ceiling: OutputCeilingOption
    @OptionGroup var fitting: FittingOptions

    @Flag(help: "Print the chain, and live the measured delay and glitches every 10 s.")
    var verbose = false

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
        var heard: [AlertEvent] = []
        var sounding = 0
        func announce(_ change: AlertEventTracker.Change) {
            switch change {
            case .began(let event):
                sounding += 1
                Terminal.note(String(format: "%.2f s: %@ (confidence %.2f)", event.start, event.alertClass.rawValue, event.confidence))
            case .ended(let event):
                sounding -= 1
                Terminal.note(String(format: "%.2f s: %@ ended", event.end, event.alertClass.rawValue))
                heard.append(event)
            }
            fanOut.alert(change, from: started)
        }
        let run = ListeningRun(chain: chain, twoEars: fitting.audiogram != nil, stop: interruptRequested,
                               status: verbose ? { Terminal.note($0) } : nil, announce: announce)
        switch (input, output) {
        case (nil, nil):
            try run.live(from: try inputDevice.find(), to: try outputDevice.find(), latency: latency, hub: try hub.address(), alerting: { sounding > 0 })
        case (let input, let output):
            reportClipping(try run.run(from: try input.map { .file($0) } ?? .device(try inputDevice.find()),
                                       to: try output.map { .file($0) } ?? .device(try outputDevice.find())))
        }
        chain.detector?.finish(announce)
        fanOut.finish()
        if let events {
            try AtomicFile.write(Data(heard.map { EventRecord($0).jsonLine + "\n" }.joined().utf8), to: events)
        }
    }
}
