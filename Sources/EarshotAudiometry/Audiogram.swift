import EarshotCore
import Foundation

/// What an audiologist reads off a finished test.
public struct AudiogramSummary: Codable, Equatable, Sendable {
    public struct EarSummary: Codable, Equatable, Sendable {
        public var ear: Ear
        /// Mean threshold at 0.5, 1, 2 and 4 kHz (WHO 2021), when all four were measured.
        public var pureToneAverageDBHL: Double?
        public var whoGrade: String?
        /// NAL-R insertion gain per frequency, dB.
        public var nalRGainDB: [String: Double]
    }

    public var ears: [EarSummary]

    public init(thresholds: [ThresholdResult]) {
        ears = Ear.allCases.reversed().compactMap { ear in
            let table = Dictionary(thresholds.filter { $0.ear == ear }.map { ($0.frequencyHz, $0.thresholdDBHL ?? $0.noResponseAtDBHL ?? 120) },
                                   uniquingKeysWith: { first, _ in first })
            guard !table.isEmpty else { return nil }
            let pta = Self.pureToneAverage(table)
            return EarSummary(ear: ear, pureToneAverageDBHL: pta, whoGrade: pta.map(Self.whoGrade),
                              nalRGainDB: Dictionary(uniqueKeysWithValues: Self.nalR(table).map { (String(Int($0.key)), $0.value) }))
        }
    }

    static func pureToneAverage(_ table: [Double: Double]) -> Double? {
        let values = [500.0, 1000, 2000, 4000].compactMap { table[$0] }
        return values.count == 4 ? values.reduce(0, +) / 4 : nil
    }

    /// The grades of the World Report on Hearing (WHO 2021), from the better-ear style PTA of one ear.
    public static func whoGrade(_ pta: Double) -> String {
        switch pta {
        case ..<20: "normal"
        case ..<35: "mild"
        case ..<50: "moderate"
        case ..<65: "moderately severe"
        case ..<80: "severe"
        case ..<95: "profound"
        default: "complete or total"
        }
    }

    /// NAL-R insertion gains at the measured frequencies NAL-R defines (see `NALR`); needs
    /// 500, 1000 and 2000 Hz.
    public static func nalR(_ table: [Double: Double]) -> [Double: Double] {
        guard let h500 = table[500], let h1k = table[1000], let h2k = table[2000] else { return [:] }
        var gains: [Double: Double] = [:]
        for frequency in NALR.offsetDB.keys {
            guard let htl = table[frequency] else { continue }
            gains[frequency] = (NALR.gainDB(thresholdDBHL: htl, atHz: frequency, h500: h500, h1k: h1k, h2k: h2k) * 10).rounded() / 10
        }
        return gains
    }
}

/// The NAL-R prescription (Byrne & Dillon 1986), the published linear rule: insertion gain
/// = X + 0.31·HTL + k(f), with X = 0.05 × (HTL₅₀₀ + HTL₁ₖ + HTL₂ₖ), or 9 + 0.116 × (that sum −
/// 180) for sums over 180 dB (the profound-loss revision, Byrne, Parkinson & Newall 1990);
/// gains below 0 dB are 0.
public enum NALR {
    /// k(f) in dB at the frequencies the rule tabulates.
    public static let offsetDB: [Double: Double] = [250: -17, 500: -8, 750: -3, 1000: 1, 1500: 1, 2000: -1, 3000: -2, 4000: -2, 6000: -2]

    /// k(f) between and beyond the tabulated frequencies: linear in log frequency, flat beyond.
    public static func offset(atHz frequency: Double) -> Double { LogFrequency.interpolate(offsetDB, atHz: frequency)! }

    public static func gainDB(thresholdDBHL: Double, atHz frequency: Double, h500: Double, h1k: Double, h2k: Double) -> Double {
        let sum = h500 + h1k + h2k
        let x = sum <= 180 ? 0.05 * sum : 9 + 0.116 * (sum - 180)
        return max(0, x + 0.31 * thresholdDBHL + offset(atHz: frequency))
    }
}

/// The standard audiogram chart as SVG: frequency on a log axis across the top, hearing level
/// downwards, right ear as red circles, left ear as blue crosses, no-responses as arrows; the
/// WHO grades as labelled zones, and each ear's pure-tone average and grade in the legend.
public enum AudiogramChart {
    /// The WHO 2021 grades' lower edges, dB HL.
    static let gradeEdges: [(fromDB: Double, name: String)] = [
        (-10, "normal"), (20, "mild"), (35, "moderate"), (50, "moderately severe"), (65, "severe"), (80, "profound"), (95, "complete or total"),
    ]

    public static func svg(thresholds: [ThresholdResult], title: String) -> String {
        let width = 640.0, height = 590.0
        let left = 70.0, right = 600.0, top = 80.0, bottom = 510.0
        let minimumHz = 125.0, maximumHz = thresholds.contains { $0.frequencyHz > 8000 } ? 16_000.0 : 8000.0
        let minimumDB = -10.0, maximumDB = 120.0
        func x(_ hz: Double) -> Double { left + (right - left) * log2(hz / minimumHz) / log2(maximumHz / minimumHz) }
        func y(_ db: Double) -> Double { top + (bottom - top) * (db - minimumDB) / (maximumDB - minimumDB) }
        func fmt(_ v: Double) -> String { String(format: "%.1f", v) }
        var svg = """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(height))" viewBox="0 0 \(Int(width)) \(Int(height))" font-family="Helvetica, Arial, sans-serif">
            <rect width="100%" height="100%" fill="white"/>
            <text x="\(fmt(width / 2))" y="28" text-anchor="middle" font-size="18">\(escape(title))</text>

            """
        for (index, grade) in gradeEdges.enumerated() {
            let to = index + 1 < gradeEdges.count ? gradeEdges[index + 1].fromDB : maximumDB
            svg += "<rect x=\"\(fmt(left))\" y=\"\(fmt(y(grade.fromDB)))\" width=\"\(fmt(right - left))\" height=\"\(fmt(y(to) - y(grade.fromDB)))\" fill=\"\(index % 2 == 0 ? "#f4f6f8" : "#ffffff")\"/>\n"
            svg += "<text x=\"\(fmt(right - 6))\" y=\"\(fmt(y(grade.fromDB) + 15))\" text-anchor=\"end\" font-size=\"12\" fill=\"#666\">\(grade.name)</text>\n"
        }
        var hz = minimumHz
        while hz <= maximumHz {
            svg += "<line x1=\"\(fmt(x(hz)))\" y1=\"\(fmt(top))\" x2=\"\(fmt(x(hz)))\" y2=\"\(fmt(bottom))\" stroke=\"#bbb\"/>\n"
            let label = hz >= 1000 ? "\(fmt(hz / 1000).replacingOccurrences(of: ".0", with: "")) k" : "\(Int(hz))"
            svg += "<text x=\"\(fmt(x(hz)))\" y=\"\(fmt(top - 10))\" text-anchor=\"middle\" font-size=\"12\">\(label)</text>\n"
            hz *= 2
        }
        for db in stride(from: minimumDB, through: maximumDB, by: 10) {
            svg += "<line x1=\"\(fmt(left))\" y1=\"\(fmt(y(db)))\" x2=\"\(fmt(right))\" y2=\"\(fmt(y(db)))\" stroke=\"\(db == 20 ? "#888" : "#ddd")\"/>\n"
            svg += "<text x=\"\(fmt(left - 8))\" y=\"\(fmt(y(db) + 4))\" text-anchor=\"end\" font-size=\"12\">\(Int(db))</text>\n"
        }
        svg += "<text x=\"\(fmt(width / 2))\" y=\"\(fmt(top - 32))\" text-anchor=\"middle\" font-size=\"13\">Frequency (Hz)</text>\n"
        svg += "<text transform=\"translate(22 \(fmt((top + bottom) / 2))) rotate(-90)\" text-anchor=\"middle\" font-size=\"13\">Hearing level (dB HL)</text>\n"
        for ear in [Ear.right, .left] {
            let colour = ear == .right ? "#d62728" : "#1f4fd6"
            let points = thresholds.filter { $0.ear == ear }.sorted { $0.frequencyHz < $1.frequencyHz }
            let found = points.filter { $0.thresholdDBHL != nil }
            if found.count > 1 {
                let path = found.map { "\(fmt(x($0.frequencyHz))),\(fmt(y($0.thresholdDBHL!)))" }.joined(separator: " ")
                svg += "<polyline points=\"\(path)\" fill=\"none\" stroke=\"\(colour)\" stroke-width=\"1.5\"/>\n"
            }
            for point in points {
                let cx = x(point.frequencyHz)
                guard let level = point.thresholdDBHL else {
                    // No response: the symbol at the loudest level tried, with a downward arrow.
                    let cy = y(point.noResponseAtDBHL ?? maximumDB)
                    svg += symbol(ear, cx, cy, colour)
                    svg += "<line x1=\"\(fmt(cx))\" y1=\"\(fmt(cy + 8))\" x2=\"\(fmt(cx + (ear == .right ? -10 : 10)))\" y2=\"\(fmt(cy + 20))\" stroke=\"\(colour)\" stroke-width=\"2\"/>\n"
                    continue
                }
                svg += symbol(ear, cx, y(level), colour)
            }
        }
        // The legend, right ear first as the chart draws it: symbol, pure-tone average, grade.
        let summaries = AudiogramSummary(thresholds: thresholds).ears
        for (row, ear) in [Ear.right, .left].enumerated() {
            let cy = height - 48 + Double(row) * 24, colour = ear == .right ? "#d62728" : "#1f4fd6"
            svg += symbol(ear, left + 10, cy, colour)
            var words = "\(ear.rawValue) ear"
            if let summary = summaries.first(where: { $0.ear == ear }) {
                if let pta = summary.pureToneAverageDBHL, let grade = summary.whoGrade {
                    words += String(format: ": pure-tone average %.0f dB HL (0.5, 1, 2, 4 kHz), ", pta) + (grade == "normal" ? "normal hearing" : "\(grade) hearing loss")
                } else {
                    words += ": no pure-tone average (it needs 0.5, 1, 2 and 4 kHz)"
                }
            } else {
                words += ": not tested"
            }
            svg += "<text x=\"\(fmt(left + 24))\" y=\"\(fmt(cy + 4))\" font-size=\"13\">\(escape(words))</text>\n"
        }
        svg += "</svg>\n"
        return svg
    }

    private static func symbol(_ ear: Ear, _ cx: Double, _ cy: Double, _ colour: String) -> String {
        let c = String(format: "%.1f", cx), d = String(format: "%.1f", cy)
        if ear == .right {
            return "<circle cx=\"\(c)\" cy=\"\(d)\" r=\"7\" fill=\"white\" stroke=\"\(colour)\" stroke-width=\"2\"/>\n"
        }
        let a = String(format: "%.1f", cx - 6), b = String(format: "%.1f", cx + 6)
        let u = String(format: "%.1f", cy - 6), v = String(format: "%.1f", cy + 6)
        return "<line x1=\"\(a)\" y1=\"\(u)\" x2=\"\(b)\" y2=\"\(v)\" stroke=\"\(colour)\" stroke-width=\"2\"/><line x1=\"\(a)\" y1=\"\(v)\" x2=\"\(b)\" y2=\"\(u)\" stroke=\"\(colour)\" stroke-width=\"2\"/>\n"
    }

    private static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
    }
}
