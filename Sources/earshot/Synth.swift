import ArgumentParser
import EarshotAlerts
import EarshotCore
import EarshotIO
import Foundation

/// `earshot synth alert`: seeded alert sounds.
struct Synth: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Synthesise sounds from a seed (the same seed always gives the same sound).",
        subcommands: [SynthAlert.self])
}

struct SynthAlert: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "alert",
        abstract: "A siren, smoke alarm, car horn or doorbell with randomly drawn parameters.")

    @Option(name: .customLong("class"), help: "siren, smoke_alarm, car_horn or doorbell.")
    var alertClass: AlertClass

    @Option(help: "Seed for the parameters.")
    var seed: UInt64 = 1

    @Option(help: "Sample rate in Hz.")
    var rate: Double = 16_000

    @Option(help: "The longest the sound may be, in seconds.")
    var seconds: Double = 6

    @Option(name: .shortAndLong, help: "Output file.")
    var output: String

    func run() throws {
        try EarshotError.validate(sampleRate: rate)
        guard seconds.isFinite, (1...120).contains(seconds) else {
            throw EarshotError.invalidArgument("--seconds must be 1–120, not \(seconds)")
        }
        let sound = AlertSynthesis.random(alertClass, seed: seed, sampleRate: rate, maximumSeconds: seconds)
        try AudioFile.write(AudioBuffer(channels: [sound.samples]), to: output, sampleRate: rate)
        Terminal.note("\(sound.description) — \(String(format: "%.2f", Double(sound.samples.count) / rate)) s written to \(output)")
    }
}

extension AlertClass: ExpressibleByArgument {}
