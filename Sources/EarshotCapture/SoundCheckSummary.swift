import Foundation

extension SoundCheckReport {
    /// The report as a person reads it: the verdict, the measurements, each problem with its fix.
    public func summary(name: String) -> String {
        let m = metrics
        var lines = ["\(name): \(verdict == .good ? "sounds good" : "needs fixing")"]
        lines.append(String(format: "  speech %.1f dBFS, peak %.1f dBFS, room tone %.1f dBFS, SNR %.1f dB", m.speechLevelDBFS, m.peakDBFS, m.noiseFloorDBFS, m.snrDB))
        var more = String(format: "  bandwidth %.1f kHz, flat tops %.3f %%, rounded peaks %.1f %%, DC %.4f", m.bandwidthHz / 1000, m.clippedShare * 100,
                          m.roundedPeakShare * 100, m.dcOffset)
        more += m.rt60Seconds.map { String(format: ", RT60 %.2f s", $0) } ?? ", RT60 –"
        more += m.humHz.map { ", hum \(Int($0)) Hz" } ?? ", no hum"
        lines.append(more)
        for problem in problems {
            lines.append("  \(problem.kind.rawValue): \(problem.detail)")
            lines.append("    fix: \(problem.advice)")
        }
        return lines.joined(separator: "\n")
    }

    /// One input's place among several checked at once.
    public struct Ranked: Encodable, Sendable {
        public var rank: Int
        public var device: String
        public var report: SoundCheckReport
    }

    /// Inputs best first: good before fix, then fewer problems, then the cleaner signal.
    public static func ranked(_ reports: [(device: String, report: SoundCheckReport)]) -> [Ranked] {
        func key(_ r: SoundCheckReport) -> (Int, Int, Double) { (r.verdict == .good ? 0 : 1, r.problems.count, -r.metrics.snrDB) }
        return reports.sorted { key($0.report) < key($1.report) }
            .enumerated().map { Ranked(rank: $0.offset + 1, device: $0.element.device, report: $0.element.report) }
    }
}
