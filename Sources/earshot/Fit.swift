import ArgumentParser
import EarshotCore
import EarshotHearingAid
import Foundation

/// `earshot fit --audiogram …`: the fitting a listener gets, before anything is played.
struct Fit: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show a hearing-aid fitting: gains per band for soft, medium and loud speech, compression, maximum output.",
        discussion: """
            Gains are insertion gains for speech at 50, 65 and 80 dB SPL; the knee is the band \
            level where compression begins; ratios are from soft to medium speech and above \
            medium; the maximum output is per band (the listener's estimated discomfort level, \
            or --max-output-dbspl if lower).
            """)

    @OptionGroup var fitting: FittingOptions

    @Option(help: OutputStyle.help)
    var format: OutputStyle = .text

    @Option(help: "Also draw the gains as a PNG chart (needs rsvg-convert).")
    var png: String?

    func run() throws {
        guard let fit = try fitting.fitting() else {
            throw EarshotError.invalidArgument("fit needs the listener's audiogram: --audiogram FILE.json or a stored test's id")
        }
        if let png { try writePNG(svg: FittingChart.svg(fit, title: "Hearing-aid fitting: \(fit.rule.name)"), to: png) }
        if format.isJSON {
            try Terminal.printJSON(fit)
            return
        }
        print("Hearing-aid fitting: \(fit.rule.name); the most it ever plays: \(format1(fit.maximumOutputDBSPL)) dB SPL")
        print("""
            Per band: the hearing loss; the insertion gain for input speech at 50 (soft), 65 (average) \
            and 80 (loud) dB SPL; the band level where compression starts (knee); the compression \
            ratios from soft to average speech and above average; the band's maximum output.
            """)
        for (name, bands) in [("Right", fit.right), ("Left", fit.left)] {
            print("\n\(name) ear")
            print(["", "loss", "gain at", "gain at", "gain at", "knee", "ratio", "ratio", "max out"].map(pad).joined())
            print(["Hz", "dB HL", "50 dB", "65 dB", "80 dB", "dB SPL", "50→65", "above 65", "dB SPL"].map(pad).joined())
            for band in bands {
                print([String(Int(band.centreHz)), format1(band.thresholdDBHL), format1(band.gainSoftDB), format1(band.gainMediumDB), format1(band.gainLoudDB),
                       format1(band.kneeDBSPL), String(format: "%.2f", band.ratioSoft), String(format: "%.2f", band.ratioLoud), format1(band.maximumOutputDBSPL)]
                    .map(pad).joined())
            }
        }
    }

    private func pad(_ text: String) -> String { text.padding(toLength: 10, withPad: " ", startingAt: 0) }
    private func format1(_ value: Double) -> String { String(format: "%.1f", value) }
}
