import ArgumentParser
import EarshotCapture
import EarshotCore
import EarshotIO
import Foundation

extension CaptureMode: ExpressibleByArgument {}

/// `earshot capture [IN] -o OUT --mode M`: record or process a microphone as a phone's capture modes do.
struct Capture: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Capture like a phone: raw, standard, voice_isolation or wide_spectrum.",
        discussion: """
            standard: 80 Hz high-pass, gentle noise suppression (10 dB), automatic gain to −20 dBFS. \
            voice_isolation: echo cancellation against what the loudspeaker played (--far on files; \
            live, the recording given with --play, played through the output device), the \
            learned noise suppressor at full strength with detected alert sounds kept out of it (as \
            in listen), automatic gain. wide_spectrum: no suppression, full bandwidth, slow and \
            gentle level control. Every mode but raw ends in a −1 dBFS peak guard. Without IN it \
            records from the input device until Ctrl-C or --seconds.
            """)

    @Argument(help: "A recording to process; without it, capture from the input device.") var input: String?
    @Option(name: .shortAndLong, help: "Output file.") var output: String
    @Option(help: "raw, standard, voice_isolation or wide_spectrum.") var mode: CaptureMode = .standard
    @Option(help: "The far end for echo cancellation (voice_isolation, files only): what the loudspeaker played.") var far: String?
    @Option(help: "Live voice_isolation: play this recording (the far end, as a call would) through the output device and take its echo out of the microphone. Capture stops half a second after it ends unless --seconds says otherwise.")
    var play: String?
    @Option(help: "Stop a live capture after this many seconds.") var seconds: Double?
    @OptionGroup var inputDevice: InputDeviceOption
    @OptionGroup var outputDevice: OutputDeviceOption
    @OptionGroup var ceiling: OutputCeilingOption

    func validate() throws {
        if far != nil, mode != .voiceIsolation { throw ValidationError("--far is for --mode voice_isolation") }
        if far != nil, input == nil { throw ValidationError("--far needs a recording (IN); live, give the far end with --play") }
        if play != nil, mode != .voiceIsolation { throw ValidationError("--play is for --mode voice_isolation") }
        if play != nil, input != nil { throw ValidationError("--play is for live capture: leave out IN, or give the far end with --far") }
        if let seconds, !(seconds.isFinite && seconds > 0 && seconds <= 86_400) {
            throw ValidationError("--seconds must be between 0 and 86400, not \(seconds)")
        }
        if input != nil, seconds != nil { throw ValidationError("--seconds is for live capture: leave out IN") }
    }

    func run() throws {
        try OutputPath.refuseOverwriting(output, inputs: [input, far, play])
        if let input { return try mode.process(input, farEnd: far, to: output) }
        let farEnd = try play.map { (samples: try LiveCapture.farEnd($0, under: ceiling.guardStage), speaker: try outputDevice.find()) }
        let capture = LiveCapture(mode: mode, microphone: try inputDevice.find(), farEnd: farEnd, seconds: seconds)
        installInterruptHandler()
        Terminal.note("Capturing from \(capture.microphone.name) in \(mode.rawValue) mode"
            + (farEnd.map { ", playing \(play ?? "") through \($0.speaker.name) as the far end" } ?? "")
            + (capture.limitFrames == nil ? "; Ctrl-C stops" : ""))
        try capture.run(into: output, stop: interruptRequested)
    }
}

/// `earshot aec --mic MIC --far FAR -o OUT`: take what a loudspeaker played out of a microphone recording.
struct EchoCancel: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "aec",
        abstract: "Echo cancellation: remove the far end (what the loudspeaker played) from the microphone recording.",
        discussion: """
            A frequency-domain Kalman filter models the echo path over --tail seconds — a \
            loudspeaker up to 300 ms late and the room — and a residual echo suppressor \
            lowers what it leaves. Both files are mixed to mono; the far end is resampled to the \
            microphone's rate if they differ (8 to 48 kHz). The output lines up with the microphone.
            """)

    @Option(help: "The microphone recording.") var mic: String
    @Option(help: "The far end: what the loudspeaker played, from its start.") var far: String
    @Option(name: .shortAndLong, help: "Output file.") var output: String
    @Option(help: "Longest echo path modelled, in seconds (delay plus room tail).") var tail: Double = 0.5
    @Option(help: "Deepest residual echo suppression, in dB (negative; 0 turns it off).") var suppressionFloor: Double = EchoCanceller.defaultFloorDB
    @Option(help: "How much more residual echo than measured to take out, in dB (0 to 20): more takes more echo and more of the near end in double talk.")
    var overestimate: Double = EchoCanceller.defaultOverestimateDB
    @Option(help: "How strongly the learned residual echo mask acts, 0 to 1 (its gains raised to this power; 0 turns it off; 16 kHz and above).")
    var echoMask: Double = EchoCanceller.defaultMaskExponent
    @Option(help: "Comfort noise where echo was suppressed, in dB relative to the room's own noise there (-40 to 10), or 'off'.")
    var comfortNoise = ComfortNoiseLevel(EchoCanceller.defaultComfortNoiseDB)

    func validate() throws {
        guard tail.isFinite, tail >= 0.05, tail <= 2 else { throw ValidationError("--tail must be between 0.05 and 2 s, not \(tail)") }
        guard suppressionFloor.isFinite, suppressionFloor <= 0, suppressionFloor >= -80 else {
            throw ValidationError("--suppression-floor must be between -80 and 0 dB, not \(suppressionFloor)")
        }
        guard overestimate.isFinite, (0...20).contains(overestimate) else {
            throw ValidationError("--overestimate must be between 0 and 20 dB, not \(overestimate)")
        }
        guard echoMask.isFinite, (0...1).contains(echoMask) else {
            throw ValidationError("--echo-mask must be between 0 and 1, not \(echoMask)")
        }
        if let db = comfortNoise.db, !(db.isFinite && (-40...10).contains(db)) {
            throw ValidationError("--comfort-noise must be between -40 and 10 dB or 'off', not \(db)")
        }
    }

    func run() throws {
        try OutputPath.refuseOverwriting(output, inputs: [mic, far])
        try EchoCanceller.cancel(microphone: mic, farEnd: far, tailSeconds: tail, floorDB: suppressionFloor, overestimateDB: overestimate,
                                   maskExponent: echoMask, comfortNoiseDB: comfortNoise.db, to: output)
    }
}

/// `--comfort-noise`: a level in dB, or `off`.
struct ComfortNoiseLevel: ExpressibleByArgument {
    let db: Double?

    init(_ db: Double?) { self.db = db }

    init?(argument: String) {
        if argument == "off" {
            db = nil
        } else if let db = Double(argument) {
            self.db = db
        } else {
            return nil
        }
    }

    var defaultValueDescription: String { db.map { String(format: "%g", $0) } ?? "off" }
}

/// `earshot soundcheck [FILE]`: what is wrong with a microphone signal, and how to fix it.
struct Soundcheck: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "soundcheck",
        abstract: "Check a microphone: level, clipping, noise, hum, bandwidth, muffling, reverberation, DC, dropouts and echo, each with a fix.",
        discussion: """
            Live (no FILE), it records 2 s of room tone — stay quiet — then --seconds of speech. \
            On a file it finds the room tone itself, in the quietest moments. Exit status 0 either \
            way: the verdict is in the output ("good" or "fix").
            """)

    @Argument(help: "A recording to check (any file libsndfile reads); without it, record from the input device.") var file: String?
    @Option(help: "Seconds of speech to record live.") var seconds: Double = 8
    @Option(help: OutputStyle.help) var format: OutputStyle = .text
    @Option(help: "Also draw the waveform, a spectrogram and the findings to this PNG file.") var png: String?
    @Flag(help: "Play the take back after recording (\"here is what you sound like\").") var play = false
    @Flag(help: "Record from every input device at once and rank them.") var allInputs = false
    @OptionGroup var inputDevice: InputDeviceOption
    @OptionGroup var outputDevice: OutputDeviceOption
    @OptionGroup var ceiling: OutputCeilingOption

    func validate() throws {
        guard seconds.isFinite, seconds >= 1, seconds <= 600 else {
            throw ValidationError("--seconds must be between 1 and 600, not \(seconds)")
        }
        if file != nil, allInputs { throw ValidationError("--all-inputs records live: leave out FILE") }
        if file != nil, play { throw ValidationError("--play plays a live take back: leave out FILE (or use earshot play)") }
        if allInputs, png != nil { throw ValidationError("--png draws one recording: leave out --all-inputs") }
        if let png, !png.lowercased().hasSuffix(".png") { throw ValidationError("--png needs a .png file name, not '\(png)'") }
    }

    func run() throws {
        if allInputs { return try checkAllInputs() }
        let name: String, check: SoundCheck
        var take: SoundCheckTake?
        if let file {
            (name, check) = ((file as NSString).lastPathComponent, try SoundCheck(recordingAt: file))
        } else {
            take = try recordLive(from: [try inputDevice.find()]).first!
            (name, check) = (take!.device.name, try take!.check())
        }
        if let png { try ChartImage.writePNG(svg: SoundCheckChart.svg(check, title: "Sound check: \(name)"), to: png) }
        if play, let take {
            Terminal.note("Here is what you sound like…")
            try DevicePlayback.play(MemorySource(channels: [take.samples], sampleRate: take.sampleRate), on: try outputDevice.find(),
                                    through: ceiling.guardStage, stop: interruptRequested)
        }
        if format.isJSON {
            try Terminal.printJSON(check.report)
        } else {
            print(check.report.summary(name: name))
        }
    }

    func recordLive(from devices: [AudioDeviceInfo]) throws -> [SoundCheckTake] {
        installInterruptHandler()
        let takes = try SoundCheckTake.record(from: devices, speechSeconds: seconds, stop: interruptRequested,
                                              quiet: { Terminal.note("Stay quiet for \(Int(SoundCheckTake.roomToneSeconds)) s while the room tone is measured…") },
                                              speak: { Terminal.note("Now speak normally for \(Int(seconds)) s, as you would on a call…") },
                                              warn: { Terminal.note("warning: \($0)") })
        if interruptRequested.load(ordering: .relaxed) { throw ExitCode(130) }
        return takes
    }

    func checkAllInputs() throws {
        let devices = try AudioDevices.all().filter { $0.inputChannels > 0 }
        guard !devices.isEmpty else { throw EarshotError.noDevices(direction: "input") }
        let ranked = SoundCheckReport.ranked(try recordLive(from: devices).map { ($0.device.name, try $0.check().report) })
        if format.isJSON { return try Terminal.printJSON(ranked) }
        for entry in ranked {
            print("\(entry.rank). " + entry.report.summary(name: entry.device))
            print()
        }
    }
}
