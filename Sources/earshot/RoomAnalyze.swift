import ArgumentParser
import EarshotIO
import EarshotRoom
import Foundation

/// `earshot room analyze IR`: ISO 3382 parameters, broadband and per octave band.
struct RoomAnalyze: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "analyze",
        abstract: "Reverberation time (T20, T30, EDT), clarity (C50, C80) and DRR of an impulse response, per octave band.")

    @Argument(help: "An impulse response file.")
    var ir: String

    @Option(help: OutputStyle.help)
    var format: OutputStyle = .text

    struct ChannelReport: Codable {
        var channel: Int
        var bands: [RoomParameters]
    }

    func run() throws {
        let (info, buffer) = try AudioFile.read(path: ir)
        let reports = try buffer.toArrays().enumerated().map { c, samples in
            ChannelReport(channel: c + 1, bands: try RoomAnalysis.analyze(samples, sampleRate: info.sampleRate))
        }
        if format.isJSON {
            try Terminal.printJSON(reports)
            return
        }
        func cell(_ value: Double?, _ digits: Int) -> String {
            (value.map { String(format: "%.\(digits)f", $0) } ?? "–").padding(toLength: 8, withPad: " ", startingAt: 0)
        }
        for report in reports {
            if reports.count > 1 { print("Channel \(report.channel)") }
            print("band      T20 s   T30 s   EDT s   C50 dB  C80 dB  DRR dB")
            for b in report.bands {
                let band = (b.bandHz.map { $0 >= 1000 ? "\(Int($0 / 1000)) kHz" : "\(Int($0)) Hz" } ?? "all")
                print(band.padding(toLength: 10, withPad: " ", startingAt: 0)
                      + cell(b.t20, 3) + cell(b.t30, 3) + cell(b.edt, 3) + cell(b.c50, 1) + cell(b.c80, 1) + cell(b.drr, 1))
            }
        }
    }
}
