import ArgumentParser
import EarshotAlerts
import EarshotAudiometry
import EarshotCore
import EarshotDSP
import EarshotEnhance
import EarshotHearingAid
import EarshotHub
import EarshotIO
import Foundation

extension LiveLatency: ExpressibleByArgument {}

/// `--input-device`, named alike in every command that captures.
struct InputDeviceOption: ParsableArguments {
    @Option(help: "Input device: its index or part of its name (default: the system's).") var inputDevice: String?

    func find() throws -> AudioDeviceInfo { try AudioDevices.find(inputDevice, direction: .input) }
}

/// `--output-device`, named alike in every command that plays.
struct OutputDeviceOption: ParsableArguments {
    @Option(help: "Output device: its index or part of its name (default: the system's).") var outputDevice: String?

    func find() throws -> AudioDeviceInfo { try AudioDevices.find(outputDevice, direction: .output) }
}

/// `--max-output-dbfs`: the one ceiling for everything Earshot plays, with one default and one check.
struct OutputCeilingOption: ParsableArguments {
    static let defaultDBFS = -6.0

    @Option(parsing: .unconditional, help: "The loudest any output sample may be, in dBFS (at most 0).") var maxOutputDbfs: Double = Self.defaultDBFS

    func validate() throws {
        guard maxOutputDbfs.isFinite, maxOutputDbfs <= 0, maxOutputDbfs >= -60 else {
            throw ValidationError("--max-output-dbfs must be between -60 and 0, not \(maxOutputDbfs)")
        }
    }

    var guardStage: OutputLevelGuard { OutputLevelGuard(ceilingDBFS: maxOutputDbfs) }
}

extension PrescriptionRule: ExpressibleByArgument {}

/// `--audiogram FILE.json|ID` and what turns it into a fitting: the rule, the maximum output,
/// the playback's calibration.
struct FittingOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The listener's audiogram: a JSON file {\"left\":{\"250\":20,…},\"right\":{…}} (dB HL) or a stored hearing test's id.",
                               valueName: "file.json|id"))
    var audiogram: String?
    @Option(help: "How gains are prescribed: nal_r (linear) or wdrc (compression, NAL-R for average speech).") var prescription: PrescriptionRule = .wdrc
    @Option(help: "The most the aid ever plays, in dB SPL (60–140).") var maxOutputDbspl: Double = 100
    @Option(help: "Calibration profile of the playback (from 'earshot calibration create'); without one, a full-scale sine is 100 dB SPL in and out.")
    var calibration: String?
    @OptionGroup var database: DatabaseOption

    /// The fitting, or nil without --audiogram.
    func fitting() throws -> Fitting? {
        guard let audiogram else { return nil }
        let thresholds = try PureToneAudiogram.load(fileOrTest: audiogram, results: database.open)
        return try Prescription.fit(thresholds, rule: prescription, maximumOutputDBSPL: maxOutputDbspl)
    }

    func profile() throws -> CalibrationProfile? { try calibration.map(CalibrationProfile.load) }
}

/// How readily each alert class is announced: `--sensitivity` and `--thresholds`, shared by
/// `detect` and `listen`.
struct AlertSensitivityOptions: ParsableArguments {
    @Option(help: ArgumentHelp(
        "CLASS=S: how readily a class is announced, 0–1 (higher hears more, and errs more); repeat or separate with commas.",
        discussion: "S is one minus the probability the detector must reach; the defaults are the model's operating point, chosen for at most one false alarm an hour. A class's sustained route (a probability held for seconds) moves with it.",
        valueName: "class=sensitivity"))
    var sensitivity: [String] = []
    @Option(help: ArgumentHelp("A JSON file of per-class thresholds (the probability to reach), {\"siren\":0.9,\"doorbell\":0.95}.", valueName: "file"))
    var thresholds: String?

    func settings(for network: AlertNetwork) throws -> AlertEventTracker.Settings {
        try network.settings(thresholdsFile: thresholds, sensitivities: sensitivity)
    }
}

/// `--data DIR`: the one folder `serve`, `watch`, `sounds`, `hearing-test` and `audiogram` share
/// (hub.sqlite, results.sqlite, tokens), so a hint one of them prints works in the others.
struct DataFolderOption: ParsableArguments {
    @Option(help: "Data folder (default: $EARSHOT_HOME, else ~/.local/share/earshot).") var data: String?
    var folder: String { data ?? DataDirectory.path }

    /// The enrolled sounds, in the folder's hub.sqlite.
    func openSounds() throws -> SoundStore {
        try SoundStore(path: (folder as NSString).appendingPathComponent("hub.sqlite"))
    }
}

extension NoiseSuppressor.Model: ExpressibleByArgument {}

/// The noise suppressor's `--model` and `--strength`, shared by `enhance` and `listen`.
struct SuppressorOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Where the gains come from: learned (a recurrent network) or classic (statistical).", valueName: "model"))
    var model: NoiseSuppressor.Model = .learned
    @Option(help: "The most any frequency is attenuated, in dB (0–40).") var strength: Double = NoiseSuppressor.defaultStrengthDB

    func validate() throws {
        guard strength.isFinite, (0...40).contains(strength) else {
            throw ValidationError("--strength is the most noise is reduced, 0–40 dB, not \(String(format: "%g", strength))")
        }
    }
}

/// Where hearing-test results are kept: results.sqlite in the data folder. `--db FILE`, the
/// former way to name the file itself, is read for one release and no longer shown.
struct DatabaseOption: ParsableArguments {
    @OptionGroup var data: DataFolderOption
    @Option(help: .hidden) var db: String?

    var path: String { db ?? ResultStore.path(in: data.folder) }

    /// The options again, for a hint to run another command on the same results.
    var spelledOut: String { db.map { " --db \(shellWord($0))" } ?? data.data.map { " --data \(shellWord($0))" } ?? "" }

    /// The results so far; there must be some.
    func open() throws -> ResultStore {
        guard FileManager.default.fileExists(atPath: path) else { throw AudiometryError.noResults(path: path) }
        return try ResultStore(path: path)
    }
}
