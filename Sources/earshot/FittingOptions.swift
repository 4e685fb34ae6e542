import ArgumentParser
import EarshotAudiometry
import EarshotCore
import EarshotHearingAid
import Foundation

extension PrescriptionRule: ExpressibleByArgument {}

/// `--audiogram FILE.json|ID` and what turns it into a fitting: the rule, the maximum output,
/// the playback's calibration.
struct FittingOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The listener's audiogram: a JSON file {\"left\":{\"250\":20,…},\"right\":{…}} (dB HL) or a stored hearing test's id.",
                               valueName: "file.json|id"))
    var audiogram: String?

    @Option(help: "How gains are prescribed: nal-r (linear) or wdrc (compression, NAL-R for average speech).")
    var prescription: PrescriptionRule = .wdrc

    @Option(help: "The most the aid ever plays, in dB SPL (60–140).")
    var maxOutputDbspl: Double = 100

    @Option(help: "Calibration profile of the playback (from 'earshot calibration create'); without one, a full-scale sine is 100 dB SPL in and out.")
    var calibration: String?

    @OptionGroup var database: DatabaseOption

    /// The fitting, or nil without --audiogram.
    func fitting() throws -> Fitting? {
        guard let audiogram else { return nil }
        let thresholds: PureToneAudiogram
        if FileManager.default.fileExists(atPath: audiogram) {
            thresholds = try PureToneAudiogram.load(path: audiogram)
        } else if let id = Int64(audiogram) {
            thresholds = try PureToneAudiogram(test: try database.open().test(id: id).result)
        } else {
            throw EarshotError.invalidArgument("--audiogram \(audiogram): no such file, and not a stored test's id")
        }
        return try Prescription.fit(thresholds, rule: prescription, maximumOutputDBSPL: maxOutputDbspl)
    }

    func profile() throws -> CalibrationProfile? { try calibration.map(CalibrationProfile.load) }
}
