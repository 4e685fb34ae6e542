import ArgumentParser
import EarshotAudiometry
import EarshotCore
import Foundation

/// `earshot calibration create`: a calibration profile for one set of headphones.
struct CalibrationCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "calibration", abstract: "Calibration profiles that turn hearing levels into digital levels.",
        subcommands: [CalibrationCreate.self])
}

struct CalibrationCreate: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "create",
        abstract: "Make a calibration profile from sound-level-meter readings or from a normal-hearing listener.",
        discussion: """
            --measured 1000=104.5,2000=103,...: dB SPL of a full-scale sine at each frequency, read \
            in the transducer's coupler. --biological 1000=-72,...: the dBFS level at which a listener \
            with normal hearing just hears each frequency (taken as 0 dB HL). Values apply to both \
            ears unless --ear is given; run again with --add to fill in the other ear.
            """)

    @Option(help: "supra-aural, insert or circumaural.")
    var transducer: Transducer = .supraAural

    @Option(help: "A name for the headphones and volume setting.")
    var name: String

    @Option(help: "Full-scale sound pressure levels, FREQ=dBSPL,…")
    var measured: String?

    @Option(help: "Normal-hearing thresholds in dBFS, FREQ=dBFS,…")
    var biological: String?

    @Option(help: "left, right or both.")
    var ear: String = "both"

    @Flag(help: "Add to the profile already in OUTPUT instead of replacing it.")
    var add = false

    @Option(name: .shortAndLong, help: "The profile file (JSON).")
    var output: String

    func run() throws {
        let ears: [Ear]
        switch ear {
        case "both": ears = [.left, .right]
        case "left": ears = [.left]
        case "right": ears = [.right]
        default: throw EarshotError.invalidArgument("--ear must be left, right or both, not '\(ear)'")
        }
        var profile: CalibrationProfile
        switch (measured, biological) {
        case (let text?, nil):
            let values = try parsePairs(text)
            for f in values.keys { _ = try transducer.retspl(atHz: f) }
            profile = CalibrationProfile(name: name, transducer: transducer, fullScaleSPL: Dictionary(uniqueKeysWithValues: ears.map { ($0, values) }))
        case (nil, let text?):
            let values = try parsePairs(text)
            guard values.values.allSatisfy({ $0 <= 0 }) else { throw EarshotError.invalidArgument("--biological levels are dBFS, at most 0") }
            profile = try .biological(name: name, transducer: transducer, thresholdsDBFS: Dictionary(uniqueKeysWithValues: ears.map { ($0, values) }))
        default:
            throw EarshotError.invalidArgument("give exactly one of --measured and --biological")
        }
        if add, FileManager.default.fileExists(atPath: output) {
            var existing = try CalibrationProfile.load(path: output)
            guard existing.transducer == transducer else {
                throw EarshotError.invalidArgument("\(output) is for \(existing.transducer.rawValue) earphones, not \(transducer.rawValue)")
            }
            for (ear, table) in profile.fullScaleSPL { existing.fullScaleSPL[ear, default: [:]].merge(table) { _, new in new } }
            profile = existing
        }
        try profile.save(path: output)
    }

    private func parsePairs(_ text: String) throws -> [Double: Double] {
        var values: [Double: Double] = [:]
        for pair in text.split(separator: ",") {
            let parts = pair.split(separator: "=").map { Double($0.trimmingCharacters(in: .whitespaces)) }
            guard parts.count == 2, let f = parts[0], let v = parts[1], v.isFinite else {
                throw EarshotError.invalidArgument("expected FREQ=VALUE pairs separated by commas, not '\(pair)'")
            }
            values[f] = v
        }
        guard !values.isEmpty else { throw EarshotError.invalidArgument("no FREQ=VALUE pairs given") }
        return values
    }
}
