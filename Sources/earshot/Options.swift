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
    @Option(help: "Input device: its index or part of its name (default: the system's).")
    var inputDevice: String?

    func find() throws -> AudioDeviceInfo { try AudioDevices.find(inputDevice, direction: .input) }
}

/// `--output-device`, named alike in every command that plays.
struct OutputDeviceOption: ParsableArguments {
    @Option(help: "Output device: its index or part of its name (default: the system's).")
    var outputDevice: String?

    func find() throws -> AudioDeviceInfo { try AudioDevices.find(outputDevice, direction: .output) }
}

/// `--max-output-dbfs`: the one ceiling for everything Earshot plays, with one default and one check.
struct OutputCeilingOption: ParsableArguments {
    static let defaultDBFS = -6.0

    @Option(parsing: .unconditional, help: "The loudest any output sample may be, in dBFS (at most 0).")
    var maxOutputDbfs: Double = Self.defaultDBFS

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

    /// The tracker's settings: the network's operating point, then the file, then `--sensitivity`.
    func settings(for network: AlertNetwork) throws -> AlertEventTracker.Settings {
        var chosen: [AlertClass: Float] = [:]
        if let thresholds {
            let data: Data
            do { data = try Data(contentsOf: URL(fileURLWithPath: thresholds)) } catch {
                throw EarshotError.invalidArgument("cannot read the thresholds file \(thresholds)")
            }
            guard let object = try? JSONDecoder().decode([String: Float].self, from: data) else {
                throw EarshotError.invalidArgument("\(thresholds) is not a JSON object of class names and numeric thresholds")
            }
            let text = object.map { "\($0.key)=\($0.value)" }.joined(separator: ",")
            chosen = try AlertNetwork.thresholds(text)
        }
        let given = try AlertNetwork.thresholds(sensitivity.joined(separator: ","))
        chosen.merge(given.mapValues { 1 - $0 }) { $1 }
        var settings = network.defaultSettings
        for (alertClass, threshold) in chosen { settings.move(alertClass, to: threshold) }
        return settings
    }
}

/// `--data DIR`: the one folder `serve`, `watch`, `sounds`, `hearing-test` and `audiogram` share
/// (hub.sqlite, results.sqlite, tokens), so a hint one of them prints works in the others.
struct DataFolderOption: ParsableArguments {
    @Option(help: "Data folder (default: $EARSHOT_HOME, else ~/.local/share/earshot).")
    var data: String?

    var folder: String { data ?? DataDirectory.path }

    /// The enrolled sounds, in the folder's hub.sqlite.
    func openSounds() throws -> SoundStore {
        try SoundStore(path: (folder as NSString).appendingPathComponent("hub.sqlite"))
    }

    /// Where hearing-test results are kept: results.sqlite in the folder, unless `--db` names a file.
    func resultsPath(db: String?) -> String { db ?? ResultStore.path(in: folder) }
}

extension NoiseSuppressor.Model: ExpressibleByArgument {}

/// The noise suppressor's `--model` and `--strength`, shared by `enhance` and `listen`.
struct SuppressorOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Where the gains come from: learned (a recurrent network) or classic (statistical).", valueName: "model"))
    var model: NoiseSuppressor.Model = .learned

    @Option(help: "The most any frequency is attenuated, in dB (0–40).")
    var strength: Double = NoiseSuppressor.defaultStrengthDB

    func validate() throws {
        guard strength.isFinite, (0...40).contains(strength) else {
            throw ValidationError("--strength is the most noise is reduced, 0–40 dB, not \(String(format: "%g", strength))")
        }
    }
}
