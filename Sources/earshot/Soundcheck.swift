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
            print(Self.describe(check.report, name: name))
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
        let total = Self.settleSeconds + Self.roomToneSeconds + seconds
        let recordings = try devices.map { try LiveRecording(device: $0, seconds: total) }
        Terminal.note("Stay quiet for \(Int(Self.roomToneSeconds)) s while the room tone is measured…")
        let group = DispatchGroup()
        for recording in recordings {
            group.enter()
            Thread.detachNewThread {
                recording.record()
                group.leave()
            }
        }
        // Cue the speaker when the room tone is done.
        if group.wait(timeout: .now() + Self.settleSeconds + Self.roomToneSeconds) == .timedOut {
            Terminal.note("Now speak normally for \(Int(seconds)) s, as you would on a call…")
        }
        group.wait()
        if interruptRequested.load(ordering: .relaxed) { throw ExitCode(130) }
        return try recordings.compactMap { recording in
            let device = recording.device
            if let failure = recording.failure {
                if devices.count == 1 { throw failure }
                Terminal.note("warning: \(device.name): \(failure)")
                return nil
            }
            let samples = recording.sink.channels[0]
            let settle = min(samples.count, Int(Self.settleSeconds * device.defaultSampleRate))
            return Take(name: device.name, samples: Array(samples[settle...]), sampleRate: device.defaultSampleRate, roomToneSeconds: Self.roomToneSeconds)
        }
    }

    /// One device's take, recorded on its own thread. Unchecked: the thread that records is the
    /// only one to touch it until the group it signals has been waited for.
    final class LiveRecording: @unchecked Sendable {
        let device: AudioDeviceInfo
        let capture: DeviceCapture
        let sink = MemorySink(channelCount: 1)
        let frames: Int
        var failure: Error?

        init(device: AudioDeviceInfo, seconds: Double) throws {
            self.device = device
            capture = try DeviceCapture(device: device, sampleRate: device.defaultSampleRate, channelCount: 1, stop: interruptRequested, stallSeconds: 3)
            frames = Int(seconds * device.defaultSampleRate)
        }

        func record() {
            do {
                _ = try Runner(blockFrames: 1024, compensateLatency: false, maximumFrames: frames, stop: interruptRequested)
                    .run(source: capture, chain: ProcessorChain(), sink: sink)
            } catch {
                failure = error
            }
            capture.close()
        }
    }

    func checkAllInputs() throws {
        let devices = try AudioDevices.all().filter { $0.inputChannels > 0 }
        guard !devices.isEmpty else { throw EarshotError.noDevices(direction: "input") }
        let takes = try recordLive(from: devices)
        struct Ranked: Encodable {
            var rank: Int
            var device: String
            var report: SoundCheckReport
        }
        let reports = try takes.map { take in
            (take.name, try SoundCheck(take.samples, sampleRate: take.sampleRate, roomToneSeconds: take.roomToneSeconds).report)
        }
        // Good before fix, then fewer problems, then the cleaner signal.
        let ranked = reports.sorted { a, b in
            let ka = (a.1.verdict == .good ? 0 : 1, a.1.problems.count, -a.1.metrics.snrDB)
            let kb = (b.1.verdict == .good ? 0 : 1, b.1.problems.count, -b.1.metrics.snrDB)
            return ka < kb
        }.enumerated().map { Ranked(rank: $0.offset + 1, device: $0.element.0, report: $0.element.1) }
        if format.isJSON {
            try Terminal.printJSON(ranked)
        } else {
            for entry in ranked {
                print("\(entry.rank). " + Self.describe(entry.report, name: entry.device))
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

    static func describe(_ report: SoundCheckReport, name: String) -> String {
        let m = report.metrics
        var lines = ["\(name): \(report.verdict == .good ? "sounds good" : "needs fixing")"]
        lines.append(String(format: "  speech %.1f dBFS, peak %.1f dBFS, room tone %.1f dBFS, SNR %.1f dB", m.speechLevelDBFS, m.peakDBFS, m.noiseFloorDBFS, m.snrDB))
        var more = String(format: "  bandwidth %.1f kHz, flat tops %.3f %%, rounded peaks %.1f %%, DC %.4f", m.bandwidthHz / 1000, m.clippedShare * 100,
                          m.roundedPeakShare * 100, m.dcOffset)
        more += m.rt60Seconds.map { String(format: ", RT60 %.2f s", $0) } ?? ", RT60 –"
        more += m.humHz.map { ", hum \(Int($0)) Hz" } ?? ", no hum"
        lines.append(more)
        for problem in report.problems {
            lines.append("  \(problem.kind.rawValue): \(problem.detail)")
            lines.append("    fix: \(problem.advice)")
        }
        return lines.joined(separator: "\n")
    }
}
