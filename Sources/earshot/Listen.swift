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
        try refuseOverwriting(output, inputs: [input])
        try refuseOverwriting(events, inputs: [input])
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
        if input == nil && output == nil {
            try listenLive(chain, announce: announce, alerting: { sounding > 0 })
        } else {
            try listenThroughFiles(chain, announce: announce)
        }
        chain.detector?.finish(announce)
        fanOut.finish()
        if let events {
            try AtomicFile.write(Data(heard.map { EventRecord($0).jsonLine + "\n" }.joined().utf8), to: events)
        }
    }

    /// Device to device, the chain inside the device callback; this thread only reports, and
    /// with --hub feeds the hub's live view from a tap on the microphone.
    private func listenLive(_ chain: ListeningChain, announce: (AlertEventTracker.Change) -> Void, alerting: () -> Bool) throws {
        let input = try inputDevice.find(), output = try outputDevice.find()
        let feed = try hub.address().map { LiveFeed(address: $0, sampleRate: ListeningChain.liveRate) }
        defer { feed?.close() }
        let path = try LiveAudioPath(
            processor: feed.map { ProcessorChain([$0.tap, chain]) } ?? ProcessorChain([chain]), input: input, output: output, sampleRate: ListeningChain.liveRate,
            inputChannels: 1, processChannels: fitting.audiogram == nil ? 1 : 2, outputChannels: min(2, output.outputChannels), latency: latency)
        if verbose {
            Terminal.note("\(chain.description) at \(ceilingText(chain)); \(input.name) → \(output.name), "
                + "\(path.isDuplex ? "one duplex stream" : "two streams"), \(path.callbackFrames) frames per callback at \(Int(path.sampleRate)) Hz, host buffers \(String(format: "%.1f", path.hostLatencySeconds * 1000)) ms")
        }
        try path.start()
        var lastReport = Date()
        while !interruptRequested.load(ordering: .relaxed) {
            usleep(50_000)
            chain.detector?.takeChanges(announce)
            feed?.pump(alerting: alerting())
            guard path.isRunning else {
                path.stop()
                throw EarshotError.deviceFailure("the audio device stopped (unplugged?)")
            }
            if verbose, Date().timeIntervalSince(lastReport) >= 10 {
                lastReport = Date()
                Terminal.note("delay \(path.latency.description); \(describe(path.counters, rate: path.sampleRate))")
            }
        }
        let latency = path.latency, counters = path.counters
        path.stop()
        if verbose { Terminal.note("delay \(latency.description); \(describe(counters, rate: path.sampleRate))") }
    }

    private func ceilingText(_ chain: ListeningChain) -> String {
        chain.outputGuard.map { String(format: "%.1f dBFS", $0.ceilingDBFS) } ?? "no ceiling"
    }

    private func describe(_ counters: LiveCounters, rate: Double) -> String {
        String(format: "underruns %d, overruns %d, resynchronised: %.1f ms dropped, %.1f ms repeated",
               counters.underruns, counters.overruns, Double(counters.droppedFrames) / rate * 1000, Double(counters.repeatedFrames) / rate * 1000)
    }

    /// A file at one end at least: the old loop, block by block. A live end cannot wait for the
    /// future, so the delay stays in; file to file lines up.
    private func listenThroughFiles(_ chain: ListeningChain, announce: @escaping (AlertEventTracker.Change) -> Void) throws {
        let chain = chain
        var source: AudioSource
        var fileRate: Double?
        if let input {
            let reader = try AudioFileReader(path: input)
            let native = ListeningChain.nativeRate(for: reader.sampleRate)
            source = native == reader.sampleRate ? reader : try ResampledSource(reader, sampleRate: native)
            fileRate = reader.sampleRate
        } else {
            source = try DeviceCapture(device: try inputDevice.find(), sampleRate: ListeningChain.liveRate, channelCount: 1, stop: interruptRequested)
        }
        if fitting.audiogram != nil {  // one microphone, two ears
            source = try ChannelMappedSource(try ChannelMappedSource(source, channelCount: 1), channelCount: 2)
        }
        let sink: AudioSink
        if let output {
            let rate = fileRate ?? source.sampleRate  // a file keeps the rate it came at
            let file = try AudioEndpoints().openSink(output, sampleRate: rate, channelCount: source.channelCount, sampleFormat: nil)
            sink = rate == source.sampleRate ? file : try ResampledSink(file, from: source.sampleRate, to: rate, channelCount: source.channelCount)
        } else {
            let device = try outputDevice.find()
            sink = try DevicePlayback(device: device, sampleRate: source.sampleRate, channelCount: min(source.channelCount, device.outputChannels))
        }
        let live = input == nil || output == nil
        let detector = chain.detector
        let runner = Runner(blockFrames: live ? 64 : 1024, compensateLatency: !live, stop: interruptRequested,
                            progress: { _ in detector?.takeChanges(announce) })
        if verbose {
            try chain.prepare(ProcessSpec(sampleRate: source.sampleRate, maximumBlockFrames: runner.blockFrames, channelCount: source.channelCount))
            let milliseconds = Double(chain.latencySamples) / source.sampleRate * 1000
            Terminal.note("\(chain.description) at \(ceilingText(chain)); algorithmic delay \(String(format: "%.2f", milliseconds)) ms at \(Int(source.sampleRate)) Hz")
        }
        try runner.run(source: source, chain: chain, sink: sink)
        reportClipping(sink)
    }
}
