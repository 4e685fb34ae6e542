import ArgumentParser
import EarshotAlerts
import EarshotCore
import Foundation

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
