import ArgumentParser
import Atomics
import EarshotCapture
import EarshotCore
import EarshotIO
import Foundation

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

    @Argument(help: "A recording to check (any file libsndfile reads); without it, record from the input device.")
    var file: String?

    @Option(help: "Seconds of speech to record live.")
    var seconds: Double = 8

    @Option(help: OutputStyle.help)
    var format: OutputStyle = .text

    @Option(help: "Also draw the waveform, a spectrogram and the findings to this PNG file.")
    var png: String?

    @Flag(help: "Play the take back after recording (\"here is what you sound like\").")
    var play = false

    @Flag(help: "Record from every input device at once and rank them.")
    var allInputs = false

    @OptionGroup var inputDevice: InputDeviceOption
    @OptionGroup var outputDevice: OutputDeviceOption
    @OptionGroup var ceiling: OutputCeilingOption

    static let roomToneSeconds = 2.0
    /// Dropped at the start of a live take: a device's first moments can carry its switch-on thump.
    static let settleSeconds = 0.3

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
        var take: Take?
        if let file {
            (name, check) = ((file as NSString).lastPathComponent, try SoundCheck(recordingAt: file))
        } else {
            let live = try recordLive(from: [try inputDevice.find()]).first!
            (name, check, take) = (live.name, try SoundCheck(live.samples, sampleRate: live.sampleRate, roomToneSeconds: live.roomToneSeconds), live)
        }
        if let png { try writePNG(svg: SoundCheckChart.svg(check, title: "Sound check: \(name)"), to: png) }
        if play, let take { try playBack(take) }
        if format.isJSON {
            try Terminal.printJSON(check.report)
        } else {
            print(check.report.summary(name: name))
        }
    }

    /// One live take, mono: room tone, then speech.
    struct Take {
        var name: String
        var samples: [Float]
        var sampleRate: Double
        var roomToneSeconds: Double
    }

    /// Records room tone then speech from each device at once (one capture stream per device).
    func recordLive(from devices: [AudioDeviceInfo]) throws -> [Take] {
        installInterruptHandler()
        let recording = try SimultaneousRecording(devices, seconds: Self.settleSeconds + Self.roomToneSeconds + seconds, stop: interruptRequested)
        Terminal.note("Stay quiet for \(Int(Self.roomToneSeconds)) s while the room tone is measured…")
        let takes = recording.run(cueAfter: Self.settleSeconds + Self.roomToneSeconds) {
            Terminal.note("Now speak normally for \(Int(seconds)) s, as you would on a call…")
        }
        if interruptRequested.load(ordering: .relaxed) { throw ExitCode(130) }
        return try takes.compactMap { take in
            let device = take.device
            if let failure = take.failure {
                if devices.count == 1 { throw failure }
                Terminal.note("warning: \(device.name): \(failure)")
                return nil
            }
            let settle = min(take.samples.count, Int(Self.settleSeconds * device.defaultSampleRate))
            return Take(name: device.name, samples: Array(take.samples[settle...]), sampleRate: device.defaultSampleRate, roomToneSeconds: Self.roomToneSeconds)
        }
    }

    func checkAllInputs() throws {
        let devices = try AudioDevices.all().filter { $0.inputChannels > 0 }
        guard !devices.isEmpty else { throw EarshotError.noDevices(direction: "input") }
        let takes = try recordLive(from: devices)
        let ranked = SoundCheckReport.ranked(try takes.map { take in
            (take.name, try SoundCheck(take.samples, sampleRate: take.sampleRate, roomToneSeconds: take.roomToneSeconds).report)
        })
        if format.isJSON {
            try Terminal.printJSON(ranked)
        } else {
            for entry in ranked {
                print("\(entry.rank). " + entry.report.summary(name: entry.device))
                print()
            }
        }
    }

    func playBack(_ take: Take) throws {
        let output = try outputDevice.find()
        Terminal.note("Here is what you sound like…")
        var source: AudioSource = MemorySource(channels: [take.samples], sampleRate: take.sampleRate)
        var rate = take.sampleRate
        let playback: DevicePlayback
        do {
            playback = try DevicePlayback(device: output, sampleRate: rate, channelCount: 1)
        } catch {
            rate = output.defaultSampleRate
            source = try ResampledSource(source, sampleRate: rate)
            playback = try DevicePlayback(device: output, sampleRate: rate, channelCount: 1)
        }
        try Runner(blockFrames: 1024, compensateLatency: false, stop: interruptRequested).run(source: source, chain: ceiling.guardStage, sink: playback)
    }
}
