import Foundation

/// The sound check drawn as SVG: the waveform over its level zones, a spectrogram, and the findings.
public enum SoundCheckChart {
    static let width = 1060.0, margin = 70.0, right = 900.0

    public static func svg(_ check: SoundCheck, title: String) -> String {
        let report = check.report
        let plotWidth = right - margin
        var svg = ""
        func text(_ x: Double, _ y: Double, _ s: String, size: Int = 13, weight: String = "normal", fill: String = "#222", anchor: String = "start") {
            svg += "<text x=\"\(f(x))\" y=\"\(f(y))\" font-family=\"DejaVu Sans, sans-serif\" font-size=\"\(size)\" font-weight=\"\(weight)\" fill=\"\(fill)\" text-anchor=\"\(anchor)\">\(escape(s))</text>\n"
        }
        let good = report.verdict == .good
        text(margin, 30, title, size: 16, weight: "bold")
        text(right, 30, good ? "Sounds good" : "Needs fixing: \(report.problems.count) problem\(report.problems.count == 1 ? "" : "s")",
             size: 16, weight: "bold", fill: good ? "#1a7f37" : "#b42318", anchor: "end")
        let seconds = Double(check.envelope.count) * check.envelopeHopSeconds

        // Waveform over level zones (amplitude scale, mirrored).
        let waveTop = 50.0, waveHeight = 180.0, mid = waveTop + waveHeight / 2
        let loud = SoundCheck.Threshold.tooLoudDBFS, quiet = SoundCheck.Threshold.tooQuietDBFS
        let zones: [(fromDB: Double, toDB: Double, colour: String, label: String)] = [
            (-1, 0, "#fde2e1", "clipping risk, over −1"),
            (loud, -1, "#fff1d6", "too loud"),
            (quiet, loud, "#e3f4e8", "good speech"),
        ]
        svg += "<rect x=\"\(f(margin))\" y=\"\(f(waveTop))\" width=\"\(f(plotWidth))\" height=\"\(f(waveHeight))\" fill=\"#f4f4f6\"/>\n"
        for zone in zones {
            let outer = pow(10, zone.toDB / 20) * waveHeight / 2, inner = pow(10, zone.fromDB / 20) * waveHeight / 2
            for sign in [-1.0, 1.0] {
                let y0 = mid - sign * outer, y1 = mid - sign * inner
                svg += "<rect x=\"\(f(margin))\" y=\"\(f(min(y0, y1)))\" width=\"\(f(plotWidth))\" height=\"\(f(abs(y1 - y0)))\" fill=\"\(zone.colour)\"/>\n"
            }
            text(right + 6, mid - (outer + inner) / 2 + 4, zone.label, size: 12, fill: "#333")
        }
        text(right + 6, mid - pow(10, quiet / 20) * waveHeight / 2 + 16, "too quiet", size: 12, fill: "#333")
        // The level scale: the zones' edges in dBFS.
        for level in [0.0, loud, quiet] {
            let y = mid - pow(10, level / 20) * waveHeight / 2
            svg += "<line x1=\"\(f(margin - 4))\" x2=\"\(f(margin))\" y1=\"\(f(y))\" y2=\"\(f(y))\" stroke=\"#555\"/>\n"
            text(margin - 6, y + 4, dB(level), size: 13, fill: "#333", anchor: "end")
        }
        var path = ""
        let count = max(1, check.envelope.count)
        for (i, peak) in check.envelope.enumerated() {
            let x = margin + plotWidth * Double(i) / Double(count), h = Double(min(1, peak)) * waveHeight / 2
            path += "M\(f(x)),\(f(mid - h))V\(f(mid + h + 0.5))"
        }
        svg += "<path d=\"\(path)\" stroke=\"#2b59c3\" stroke-width=\"\(f(max(0.6, plotWidth / Double(count))))\"/>\n"
        // The time scale, a tick every 1, 2, 5, 10… s.
        let step = [1.0, 2, 5, 10, 20, 30, 60, 120].first { seconds / $0 <= 12 } ?? 300
        for t in stride(from: 0.0, through: seconds, by: step) {
            let x = margin + plotWidth * t / max(seconds, 1e-9)
            svg += "<line x1=\"\(f(x))\" x2=\"\(f(x))\" y1=\"\(f(waveTop + waveHeight))\" y2=\"\(f(waveTop + waveHeight + 4))\" stroke=\"#555\"/>\n"
            text(x, waveTop + waveHeight + 16, "\(Int(t)) s", size: 13, fill: "#333", anchor: "middle")
        }

        // Spectrogram, dB relative to its loudest cell.
        let specTop = waveTop + waveHeight + 30, specHeight = 200.0
        let cells = check.spectrogramDB
        if let first = cells.first {
            let columns = cells.count, rows = first.count
            let loudest = cells.joined().max() ?? 0
            let cellWidth = plotWidth / Double(columns), cellHeight = specHeight / Double(rows)
            for c in 0..<columns {
                for r in 0..<rows {
                    let shade = max(0, min(1, (Double(cells[c][r] - loudest) + 90) / 90))
                    svg += "<rect x=\"\(f(margin + Double(c) * cellWidth))\" y=\"\(f(specTop + specHeight - Double(r + 1) * cellHeight))\" width=\"\(f(cellWidth + 0.3))\" height=\"\(f(cellHeight + 0.3))\" fill=\"\(colour(shade))\"/>\n"
                }
            }
            // The frequency scale, up to the recording's own Nyquist frequency.
            let nyquist = check.spectrogramTopHz
            let kHzStep = [1.0, 2, 4, 5, 10].first { nyquist / 1000 / $0 <= 6 } ?? 20
            for k in stride(from: 0.0, through: nyquist / 1000, by: kHzStep) {
                let y = specTop + specHeight * (1 - k * 1000 / nyquist)
                svg += "<line x1=\"\(f(margin - 4))\" x2=\"\(f(margin))\" y1=\"\(f(y))\" y2=\"\(f(y))\" stroke=\"#555\"/>\n"
                text(margin - 6, y + 4, "\(Int(k)) kHz", size: 13, fill: "#333", anchor: "end")
            }
            let bandwidth = report.metrics.bandwidthHz
            if bandwidth < nyquist * 0.98 {
                let y = specTop + specHeight * (1 - bandwidth / nyquist)
                svg += "<line x1=\"\(f(margin))\" x2=\"\(f(right))\" y1=\"\(f(y))\" y2=\"\(f(y))\" stroke=\"#f5c400\" stroke-dasharray=\"6 4\"/>\n"
                text(right + 6, y + 4, String(format: "bandwidth %.1f kHz", bandwidth / 1000), size: 13, fill: "#333")
            }
        }

        // Findings.
        var y = specTop + specHeight + 30
        let m = report.metrics
        var line = String(format: "speech %.1f dBFS · peak %.1f dBFS · room tone %.1f dBFS · SNR %.1f dB · bandwidth %.1f kHz", m.speechLevelDBFS, m.peakDBFS, m.noiseFloorDBFS, m.snrDB, m.bandwidthHz / 1000)
        if let rt60 = m.rt60Seconds { line += String(format: " · RT60 %.2f s", rt60) }
        if let hum = m.humHz { line += " · hum \(Int(hum)) Hz" }
        text(margin, y, line, size: 12, fill: "#333")
        y += 24
        if report.problems.isEmpty {
            text(margin, y, "No problems found.", size: 13, fill: "#1a7f37")
            y += 20
        }
        for problem in report.problems {
            text(margin, y, problem.kind.rawValue, size: 13, weight: "bold", fill: "#b42318")
            for line in wrapped(problem.detail) {
                text(margin + 110, y, line, size: 12)
                y += 16
            }
            for line in wrapped("→ " + problem.advice) {
                text(margin + 110, y, line, size: 12, fill: "#1f4e99")
                y += 16
            }
            y += 10
        }
        let height = y + 10
        return "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(Int(width))\" height=\"\(Int(height))\" viewBox=\"0 0 \(Int(width)) \(Int(height))\">\n"
            + "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n" + svg + "</svg>\n"
    }

    private static func f(_ x: Double) -> String { String(format: "%.1f", x) }
    private static func dB(_ level: Double) -> String { level == 0 ? "0 dBFS" : "−\(Int(-level)) dBFS" }

    /// Lines of at most `width` characters, broken between words.
    static func wrapped(_ text: String, width: Int = 105) -> [String] {
        var lines: [String] = [], line = ""
        for word in text.split(separator: " ") {
            if !line.isEmpty, line.count + 1 + word.count > width {
                lines.append(line)
                line = ""
            }
            line += (line.isEmpty ? "" : " ") + word
        }
        if !line.isEmpty { lines.append(line) }
        return lines
    }

    /// Dark blue → teal → yellow, as shade goes 0 → 1.
    private static func colour(_ shade: Double) -> String {
        let stops: [(Double, Double, Double)] = [(13, 8, 64), (33, 120, 140), (94, 201, 98), (253, 231, 37)]
        let position = shade * Double(stops.count - 1), i = min(stops.count - 2, Int(position)), t = position - Double(i)
        let a = stops[i], b = stops[i + 1]
        return String(format: "#%02x%02x%02x", Int(a.0 + (b.0 - a.0) * t), Int(a.1 + (b.1 - a.1) * t), Int(a.2 + (b.2 - a.2) * t))
    }

    private static func escape(_ s: String) -> String {
        s.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
    }
}
