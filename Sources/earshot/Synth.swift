import ArgumentParser
import EarshotAlerts
import EarshotCore
import EarshotIO
import EarshotSynthesis
import Foundation

/// `earshot synth alert`: seeded alert sounds.
struct Synth: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Synthesise sounds from a seed (the same seed always gives the same sound).",
        subcommands: [SynthAlert.self, SynthScene.self])
}

struct SynthAlert: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "alert",
        abstract: "A siren, smoke alarm, car horn or doorbell with randomly drawn parameters.")

    @Option(name: .customLong("class"), help: "siren, smoke_alarm, car_horn or doorbell.") var alertClass: AlertClass
    @Option(help: "Seed for the parameters (default: the first seed giving the class's most familiar sound, a ding-dong chime for a doorbell).") var seed: UInt64?
    @Option(help: "Sample rate in Hz.") var rate: Double = 16_000
    @Option(help: "The longest the sound may be, in seconds.") var seconds: Double = 6
    @Option(name: .shortAndLong, help: "Output file.") var output: String

    func run() throws {
        try EarshotError.validate(sampleRate: rate)
        guard seconds.isFinite, (1...120).contains(seconds) else {
            throw EarshotError.invalidArgument("--seconds must be 1–120, not \(seconds)")
        }
        let sound = AlertSynthesis.random(alertClass, seed: seed ?? AlertSynthesis.familiarSeed(alertClass), sampleRate: rate, maximumSeconds: seconds)
        try AudioFile.write(AudioBuffer(channels: [sound.samples]), to: output, sampleRate: rate)
        Terminal.note("\(sound.description) — \(String(format: "%.2f", Double(sound.samples.count) / rate)) s written to \(output)")
    }
}

/// `earshot synth scene`: a labelled scene for training and evaluating the alert detector.
struct SynthScene: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scene",
        abstract: "A seeded scene of background, speech and alerts through rooms, with a label for every alert.",
        discussion: """
            Speech comes from the Free Spoken Digit Dataset in --data and from espeak-ng voices (if             installed); backgrounds from the recordings in --data/noise or synthesised (babble,             traffic-like, machinery, music-like); rooms are measured (--data/rir) or simulated.             Without --data, everything is synthesised.
            """)

    @Option(help: "Seed: the same seed always gives the same scene.") var seed: UInt64 = 1
    @Option(help: "Length in seconds.") var duration: Double = 60
    @Option(help: "Sample rate in Hz.") var rate: Double = 16_000
    @Option(help: "Alerts per minute, on average (0: none, for alert-free audio).") var alertsPerMinute: Double = 6
    @Option(help: "Folder of shared recordings (speech/fsdd, noise, rir).") var data: String = "../shared/data"
    @Option(name: .shortAndLong, help: "The scene (audio file).") var output: String
    @Option(help: "The labels (JSON): class, start, end, snr, variant, description, room of every alert.") var labels: String
    @Option(help: "Which measured rooms and speech takes to use: training or evaluation (disjoint sets).") var rooms: RoomSet = .training
    @Option(help: "Also write the alerts alone, exactly as mixed into the scene (audio file).") var alertTrack: String?

    func run() throws {
        try EarshotError.validate(sampleRate: rate)
        let material = try gather()
        let scene = try SceneGenerator.generate(seed: seed, durationSeconds: duration, sampleRate: rate, material: material, alertsPerMinute: alertsPerMinute)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        let labelData = try encoder.encode(scene.labels)
        try AudioFile.write(AudioBuffer(channels: [scene.samples]), to: output, sampleRate: rate, sampleFormat: .f32)
        if let alertTrack {
            try AudioFile.write(AudioBuffer(channels: [scene.alerts]), to: alertTrack, sampleRate: rate, sampleFormat: .f32)
        }
        try AtomicFile.write(labelData, to: labels)
        Terminal.note("\(scene.labels.count) alert(s) in \(Int(duration)) s written to \(output), labels in \(labels)")
    }

    private func gather() throws -> SceneMaterial {
        var random = SeededRandom(seed: seed &+ 7)
        var material = try SceneMaterial(folder: data, sampleRate: rate, rooms: rooms, random: &random)
        material.speech += SceneMaterial.espeakSentences(sampleRate: rate, random: &random)
        if material.noises.isEmpty && material.speech.isEmpty {
            Terminal.note("no recordings in \(data) and no espeak-ng: the scene is synthetic backgrounds and alerts only")
        }
        return material
    }
}

extension AlertClass: ExpressibleByArgument {}
extension RoomSet: ExpressibleByArgument {}
