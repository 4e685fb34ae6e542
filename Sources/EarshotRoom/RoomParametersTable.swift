import Foundation

extension RoomParameters {
    /// Bands as a table for a person to read: T20, T30 and EDT in seconds, C50, C80 and DRR in dB.
    public static func table(_ bands: [RoomParameters]) -> String {
        func cell(_ value: Double?, _ digits: Int) -> String {
            (value.map { String(format: "%.\(digits)f", $0) } ?? "–").padding(toLength: 8, withPad: " ", startingAt: 0)
        }
        return (["band      T20 s   T30 s   EDT s   C50 dB  C80 dB  DRR dB"] + bands.map { b in
            let band = b.bandHz.map { $0 >= 1000 ? "\(Int($0 / 1000)) kHz" : "\(Int($0)) Hz" } ?? "all"
            return band.padding(toLength: 10, withPad: " ", startingAt: 0)
                + cell(b.t20, 3) + cell(b.t30, 3) + cell(b.edt, 3) + cell(b.c50, 1) + cell(b.c80, 1) + cell(b.drr, 1)
        }).joined(separator: "\n")
    }
}
