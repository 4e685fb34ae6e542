import EarshotAudiometry
import Foundation

extension TestResult {
    /// The fitting `earshot fit` prescribes for this result by default; nil where the test left
    /// out frequencies a fitting needs.
    public var defaultFitting: Fitting? {
        try? Prescription.fit(PureToneAudiogram(test: self))
    }

    /// The result for a person to read: thresholds per ear, pure-tone averages and WHO grades,
    /// the default fitting's gains for average speech (`fittingHint` after its heading), and
    /// how reliable the test was.
    public func summaryText(fittingHint: String? = nil) -> String {
        func cell(_ text: String, _ width: Int = 7) -> String { text.padding(toLength: width, withPad: " ", startingAt: 0) }
        let frequencies = Set(thresholds.map(\.frequencyHz)).sorted()
        var lines = ["Hz      " + frequencies.map { cell(String(Int($0))) }.joined()]
        for ear in [Ear.right, .left] {
            let row = frequencies.map { f -> String in
                guard let t = thresholds.first(where: { $0.ear == ear && $0.frequencyHz == f }) else { return "–" }
                if let level = t.thresholdDBHL { return String(format: "%.0f", level) }
                return ">\(Int(t.noResponseAtDBHL ?? 0))"
            }
            lines.append(cell(ear.rawValue, 8) + row.map { cell($0) }.joined())
        }
        for ear in AudiogramSummary(thresholds: thresholds).ears {
            let pta = ear.pureToneAverageDBHL.map { String(format: "%.1f dB HL", $0) } ?? "– (needs 0.5, 1, 2 and 4 kHz)"
            let grade = ear.whoGrade.map { $0 == "normal" ? "normal hearing" : "\($0) hearing loss" } ?? "–"
            lines.append("\(ear.ear.rawValue) ear: pure-tone average (0.5–4 kHz) \(pta), WHO grade: \(grade)")
        }
        if let fitting = defaultFitting {
            lines.append("Fitting, \(fitting.rule.name), gain for average speech (65 dB SPL)\(fittingHint.map { " — \($0)" } ?? ""):")
            for (ear, bands) in [("right", fitting.right), ("left", fitting.left)] {
                lines.append("  \(ear): " + bands.map { "\(Int($0.centreHz)) Hz \(String(format: "%.0f", $0.gainMediumDB)) dB" }.joined(separator: ", "))
            }
        }
        lines.append("\(presentations) tones, \(reliability.catchTrials) silent trials")
        lines += reliability.flags.map { "⚠ \($0)" } + reliability.notes.map { "• \($0)" }
        return lines.joined(separator: "\n")
    }
}
