import ArgumentParser
import EarshotAlerts
import EarshotCore
import EarshotDSP
import EarshotEnhance
import EarshotIO
import Foundation

/// `earshot listen`: the hearing-aid path, microphone to headphones: noise reduced, alerts
/// detected, announced and kept out of the noise reduction.
struct Listen: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Listen through Earshot: from an input device (or a file) to headphones (or a file).",
        discussion: """
            The chain: alert detector → noise suppressor, which lets a detected alert's tonal \
            components through at unity gain → output guard. Events are printed on stderr as they \
            begin and end; --events also writes them as JSON lines. Live, the chain runs at 48 kHz \
            with the suppressor's 7.9 ms delay plus the devices' own buffers; Ctrl-C stops. Nothing \
            reaches the output above --max-output-dbfs.
            """)

    @Argument(help: "A file to listen to instead of the input device.")
    var input: String?

    @Option(name: .shortAndLong, help: "Write to this file instead of the output device.")
    var output: String?

    @Option(help: "Input device (index or part of its name).")
    var device: String?

    @Option(help: "Output device (index or part of its name).")
    var outputDevice: String?

    @Flag(inversion: .prefixedNo, help: "Reduce background noise.")
    var enhance = true

    @Flag(inversion: .prefixedNo, help: "Listen for sirens, smoke alarms, car horns and doorbells.")
    var alerts = true

    @Flag(inversion: .prefixedNo, help: "Keep detected alerts out of the noise reduction.")
    var separate = true

    @OptionGroup var sensitivity: AlertSensitivityOptions

    @Option(help: "Also write every event to this file, one JSON object per line.")
    var events: String?

    @OptionGroup var suppression: SuppressorOptions

    @Option(parsing: .unconditional, help: "The loudest any output sample may be, in dBFS (at most 0).")
    var maxOutputDbfs: Double = -6

    @Flag(help: "Print the chain and its delay on stderr.")
    var verbose = false

    func run() throws {
        guard maxOutputDbfs.isFinite, maxOutputDbfs <= 0 else {
            throw EarshotError.invalidArgument("--max-output-dbfs must be at most 0, not \(maxOutputDbfs)")
        }
        let network = alerts ? try AlertNetwork.bundled() : nil
        var chain = try ListeningChain(
            enhance: enhance, model: suppression.model, strengthDB: suppression.strength, detector: network, alertSettings: try network.map(sensitivity.settings),
            separate: separate, maximumOutputDBFS: maxOutputDbfs)
        installInterruptHandler()

        let source: AudioSource
        var fileRate: Double?
        var live = false
        if let input {
            let reader = try AudioFileReader(path: input)
            let native = ListeningChain.nativeRate(for: reader.sampleRate)
            source = native == reader.sampleRate ? reader : try ResampledSource(reader, sampleRate: native)
            fileRate = reader.sampleRate
        } else {
            let device = try AudioDevices.find(self.device, direction: .input)
            source = try DeviceCapture(device: device, sampleRate: 48_000, channelCount: 1, stop: interruptRequested)
            live = true
        }
        let sink: AudioSink
        if let output {
            // A file keeps the rate it came at.
            let rate = fileRate ?? source.sampleRate
            let file = try AudioEndpoints().openSink(output, sampleRate: rate, channelCount: source.channelCount, sampleFormat: nil)
            sink = rate == source.sampleRate ? file : try ResampledSink(file, from: source.sampleRate, to: rate, channelCount: source.channelCount)
        } else {
            let device = try AudioDevices.find(outputDevice, direction: .output)
            sink = try DevicePlayback(device: device, sampleRate: source.sampleRate, channelCount: min(source.channelCount, device.outputChannels))
            live = true
        }
        // A live path cannot wait for the future: the delay stays in. Files line up.
        var heard: [AlertEvent] = []
        let detector = chain.detector
        func announce(_ change: AlertEventTracker.Change) {
            switch change {
            case .began(let event):
                Terminal.note(String(format: "%.2f s: %@ (confidence %.2f)", event.start, event.alertClass.rawValue, event.confidence))
            case .ended(let event):
                Terminal.note(String(format: "%.2f s: %@ ended", event.end, event.alertClass.rawValue))
                heard.append(event)
            }
        }
        let runner = Runner(blockFrames: live ? 64 : 1024, compensateLatency: !live, stop: interruptRequested,
                            progress: { _ in detector?.takeChanges(announce) })
        if verbose {
            try chain.prepare(ProcessSpec(sampleRate: source.sampleRate, maximumBlockFrames: runner.blockFrames, channelCount: source.channelCount))
            let milliseconds = Double(chain.latencySamples) / source.sampleRate * 1000
            Terminal.note("\(chain.description) at \(Int(maxOutputDbfs)) dBFS; algorithmic delay \(String(format: "%.2f", milliseconds)) ms at \(Int(source.sampleRate)) Hz")
        }
        try runner.run(source: source, chain: &chain, sink: sink)
        detector?.finish(announce)
        reportClipping(sink)
        if let events {
            try AtomicFile.write(Data(heard.map { EventFormat.jsonLine($0) + "\n" }.joined().utf8), to: events)
        }
    }
}
