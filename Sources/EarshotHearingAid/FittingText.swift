import Foundation

extension Fitting {
    /// The fitting for a person to read: per ear and band, the loss, the gains for soft, average
    /// and loud speech, the knee, the compression ratios and the maximum output.
    public var tableText: String {
        func pad(_ text: String) -> String { text.padding(toLength: 10, withPad: " ", startingAt: 0) }
        func format1(_ value: Double) -> String { String(format: "%.1f", value) }
        var lines = [
            "Hearing-aid fitting: \(rule.name); the most it ever plays: \(format1(maximumOutputDBSPL)) dB SPL",
            "Per band: the hearing loss; the insertion gain for input speech at 50 (soft), 65 (average) "
                + "and 80 (loud) dB SPL; the band level where compression starts (knee); the compression "
                + "ratios from soft to average speech and above average; the band's maximum output.",
        ]
        for (name, bands) in [("Right", right), ("Left", left)] {
            lines += ["", "\(name) ear"]
            lines.append(["", "loss", "gain at", "gain at", "gain at", "knee", "ratio", "ratio", "max out"].map(pad).joined())
            lines.append(["Hz", "dB HL", "50 dB", "65 dB", "80 dB", "dB SPL", "50→65", "above 65", "dB SPL"].map(pad).joined())
            for band in bands {
                lines.append([String(Int(band.centreHz)), format1(band.thresholdDBHL), format1(band.gainSoftDB), format1(band.gainMediumDB),
                              format1(band.gainLoudDB), format1(band.kneeDBSPL), String(format: "%.2f", band.ratioSoft),
                              String(format: "%.2f", band.ratioLoud), format1(band.maximumOutputDBSPL)].map(pad).joined())
            }
        }
        return lines.joined(separator: "\n")
    }
}
