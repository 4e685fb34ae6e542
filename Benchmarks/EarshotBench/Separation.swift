import EarshotAlerts
import EarshotCore
import EarshotHearingAid
import EarshotIO
import Foundation

/// `earshot-bench separation DIR`: how much of each alert survives the listening chain, with and
/// without the separator, on scenes written with `earshot synth scene --alert-track`.
///
/// Each scene runs as three channels — the mix, its alert component alone, and the rest — with
/// the probe channels getting exactly the gains the mix got, so the output's alert and noise
/// components are measured directly. Per alert (over its labelled span): alert level out − in,
/// and noise level out − in. On alert-free stretches, whether the output equals the
/// enhancement's alone.
func separationReport(folder: String) throws {
    let names = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".json") }.sorted()
    guard !names.isEmpty else { throw EarshotError.invalidArgument("no scenes (*.json with .wav and .alerts.wav) in \(folder)") }
    let network = try AlertNetwork.bundled()
    struct Row { var alertClass: String; var snr: Double; var keptWith: Double; var keptWithout: Double; var noiseWith: Double; var noiseWithout: Double }
    var rows: [Row] = []
    var quietDifference: Float = 0
    var quietSamples = 0
    for name in names {
        let stem = (folder as NSString).appendingPathComponent(String(name.dropLast(5)))
        let labels = try JSONDecoder().decode([SceneLabelRecord].self, from: Data(contentsOf: URL(fileURLWithPath: stem + ".json")))
        let (info, mixBuffer) = try AudioFile.read(path: stem + ".wav")
        let (_, alertBuffer) = try AudioFile.read(path: stem + ".alerts.wav")
        let mix = mixBuffer.toArrays()[0], alert = alertBuffer.toArrays()[0]
        func run(separate: Bool, enhanceOnly: Bool = false) throws -> AlertProbe {
            try AlertProbe(mix: mix, alerts: alert, sampleRate: info.sampleRate, network: enhanceOnly ? nil : network, separate: separate, blockFrames: 1024)
        }
        let with = try run(separate: true), without = try run(separate: false), plain = try run(separate: false, enhanceOnly: true)
        var inAlert = [Bool](repeating: false, count: mix.count)
        for label in labels {
            let range = Int(label.start * info.sampleRate)..<min(mix.count, Int(label.end * info.sampleRate))
            // Alerts under 0.3 s, or cut off before they sound, say nothing about preservation.
            guard range.count > Int(0.3 * info.sampleRate), with.alertChangeDB(over: range).isFinite else { continue }
            for i in max(0, range.lowerBound - Int(3 * info.sampleRate))..<min(mix.count, range.upperBound + Int(4 * info.sampleRate)) { inAlert[i] = true }
            rows.append(Row(
                alertClass: label.alertClass, snr: label.snr,
                keptWith: with.alertChangeDB(over: range), keptWithout: without.alertChangeDB(over: range),
                noiseWith: with.restChangeDB(over: range), noiseWithout: without.restChangeDB(over: range)))
        }
        // Far from every alert, the chain must give the enhancement's output exactly.
        for i in mix.indices where !inAlert[i] {
            quietDifference = max(quietDifference, abs(with.output[0][i] - plain.output[0][i]))
            quietSamples += 1
        }
    }
    func median(_ x: [Double]) -> Double { let s = x.sorted(); return s.isEmpty ? .nan : s[s.count / 2] }
    print("Alert preservation through the listening chain (\(rows.count) alerts in \(names.count) scenes): level out − in over each alert, dB")
    print("  class         alerts  kept, separator  kept, without  noise, separator  noise, without  within 1 dB (sep / without)")
    for alertClass in AlertClass.allCases.map(\.rawValue) + ["all"] {
        let subset = rows.filter { alertClass == "all" || $0.alertClass == alertClass }
        guard !subset.isEmpty else { continue }
        let within = Double(subset.filter { abs($0.keptWith) <= 1 }.count) / Double(subset.count)
        let withinWithout = Double(subset.filter { abs($0.keptWithout) <= 1 }.count) / Double(subset.count)
        print("  " + alertClass.padding(toLength: 12, withPad: " ", startingAt: 0) + String(format: "  %6d  %15.2f  %13.2f  %16.2f  %14.2f  %.2f / %.2f", subset.count,
                     median(subset.map(\.keptWith)), median(subset.map(\.keptWithout)),
                     median(subset.map(\.noiseWith)), median(subset.map(\.noiseWithout)), within, withinWithout))
    }
    for (low, high) in [(-10.0, 0.0), (0, 10), (10, 20.01)] {
        let subset = rows.filter { $0.snr >= low && $0.snr < high }
        guard !subset.isEmpty else { continue }
        print(String(format: "  SNR %+.0f…%+.0f dB: %d alerts, kept %.2f dB with the separator, %.2f dB without", low, high, subset.count,
                     median(subset.map(\.keptWith)), median(subset.map(\.keptWithout))))
    }
    print(String(format: "Away from alerts (%.0f s): largest difference from the enhancement alone %.2e", Double(quietSamples) / 16_000, quietDifference))
}

/// The fields of a scene label the report needs.
struct SceneLabelRecord: Decodable {
    var alertClass: String
    var start: Double
    var end: Double
    var snr: Double
    enum CodingKeys: String, CodingKey { case alertClass = "class", start, end, snr }
}
