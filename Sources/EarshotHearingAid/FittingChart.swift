import EarshotAudiometry
import Foundation

/// A fitting as SVG: insertion gain against frequency for soft, average and loud input speech,
/// one panel per ear (right in red, left in blue, as audiograms draw them), the maximum output
/// beneath each panel's title and a legend in words.
public enum FittingChart {
    public static func svg(_ fitting: Fitting, title: String) -> String {
        let width = 960.0, height = 490.0, panelWidth = 380.0, top = 90.0, bottom = 400.0
        let minimumHz = 200.0, maximumHz = 10_000.0, maximumGain = 60.0
        func fmt(_ v: Double) -> String { String(format: "%.1f", v) }
        let curves: [(Int, KeyPath<BandFitting, Double>, String)] = [(50, \.gainSoftDB, "6 4"), (65, \.gainMediumDB, ""), (80, \.gainLoudDB, "2 3")]
        var svg = """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(height))" viewBox="0 0 \(Int(width)) \(Int(height))" font-family="Helvetica, Arial, sans-serif">
            <rect width="100%" height="100%" fill="white"/>
            <text x="\(fmt(width / 2))" y="28" text-anchor="middle" font-size="18">\(title.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;"))</text>

            """
        for (panel, ear) in [Ear.right, .left].enumerated() {
            let left = 70 + Double(panel) * (panelWidth + 70), right = left + panelWidth
            func x(_ hz: Double) -> Double { left + (right - left) * log(hz / minimumHz) / log(maximumHz / minimumHz) }
            func y(_ gain: Double) -> Double { bottom - (bottom - top) * min(max(gain, 0), maximumGain) / maximumGain }
            let colour = ear == .right ? "#c0392b" : "#2458b3"
            svg += "<text x=\"\(fmt((left + right) / 2))\" y=\"58\" text-anchor=\"middle\" font-size=\"15\" fill=\"\(colour)\">\(ear.rawValue.capitalized) ear — never louder than \(Int(fitting.maximumOutputDBSPL)) dB SPL</text>\n"
            for hz in [250.0, 500, 1000, 2000, 4000, 8000] {
                svg += "<line x1=\"\(fmt(x(hz)))\" y1=\"\(fmt(top))\" x2=\"\(fmt(x(hz)))\" y2=\"\(fmt(bottom))\" stroke=\"#ccc\"/>\n"
                svg += "<text x=\"\(fmt(x(hz)))\" y=\"\(fmt(bottom + 18))\" text-anchor=\"middle\" font-size=\"12\">\(hz >= 1000 ? "\(Int(hz / 1000))k" : String(Int(hz)))</text>\n"
            }
            for gain in stride(from: 0.0, through: maximumGain, by: 10) {
                svg += "<line x1=\"\(fmt(left))\" y1=\"\(fmt(y(gain)))\" x2=\"\(fmt(right))\" y2=\"\(fmt(y(gain)))\" stroke=\"#ddd\"/>\n"
                svg += "<text x=\"\(fmt(left - 8))\" y=\"\(fmt(y(gain) + 4))\" text-anchor=\"end\" font-size=\"12\">\(Int(gain))</text>\n"
            }
            svg += "<text x=\"\(fmt((left + right) / 2))\" y=\"\(fmt(bottom + 40))\" text-anchor=\"middle\" font-size=\"13\">frequency (Hz)</text>\n"
            svg += "<text transform=\"translate(\(fmt(left - 42)) \(fmt((top + bottom) / 2))) rotate(-90)\" text-anchor=\"middle\" font-size=\"13\">insertion gain (dB)</text>\n"
            let bands = fitting.bands(ear)
            for (level, gain, dash) in curves {
                let points = bands.map { "\(fmt(x($0.centreHz))),\(fmt(y($0[keyPath: gain])))" }.joined(separator: " ")
                svg += "<polyline points=\"\(points)\" fill=\"none\" stroke=\"\(colour)\" stroke-width=\"2\" stroke-dasharray=\"\(dash)\"/>\n"
                if let last = bands.last {
                    svg += "<text x=\"\(fmt(x(last.centreHz) + 6))\" y=\"\(fmt(y(last[keyPath: gain]) + 4))\" font-size=\"11\" fill=\"\(colour)\">\(level)</text>\n"
                }
            }
        }
        // The legend: what each line is.
        for (index, (level, _, dash)) in curves.enumerated() {
            let x0 = 110 + Double(index) * 270, y0 = height - 22
            svg += "<line x1=\"\(fmt(x0))\" y1=\"\(fmt(y0 - 4))\" x2=\"\(fmt(x0 + 36))\" y2=\"\(fmt(y0 - 4))\" stroke=\"#333\" stroke-width=\"2\" stroke-dasharray=\"\(dash)\"/>\n"
            let words = ["soft", "average", "loud"][index]
            svg += "<text x=\"\(fmt(x0 + 44))\" y=\"\(fmt(y0))\" font-size=\"13\">\(words) speech in: \(level) dB SPL</text>\n"
        }
        return svg + "</svg>\n"
    }
}
