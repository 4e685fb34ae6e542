import ArgumentParser
import EarshotAudiometry
import EarshotCore
import Foundation

/// `earshot hearing-test run`: a pure-tone hearing test, driven over a line protocol or played
/// on a device.
struct HearingTest: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hearing-test",
        abstract: "Self-administered pure-tone audiometry with calibrated levels.",
        subcommands: [HearingTestRun.self])
}

struct HearingTestRun: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run a hearing test: over a JSON line protocol (--protocol jsonl) or interactively with headphones.",
        discussion: """
            Protocol: one JSON object per line on stdout, {"type":"stimulus","id":17,"ear":"left",\
            "frequencyHz":1000,"levelDBHL":35} (ear "none" for a silent catch trial); one answer per \
            line on stdin, {"id":17,"response":"left"} with "left", "right" or "none" (and optionally \
            "responseSeconds"); finally {"type":"result",...}.
            Interactive: tones play on the output device; press L or R when you hear a tone in that \
            ear, Q to stop.
            """)

    enum LineFormat: String, ExpressibleByArgument { case jsonl }

    @Option(help: "Drive the test over stdin/stdout in this protocol instead of playing tones.")
    var `protocol`: LineFormat?

    @Option(help: "hughson-westlake, quick or bayesian.")
    var procedure: ProcedureKind = .hughsonWestlake

    @Option(help: "Test frequencies in Hz, comma-separated (default 250,500,1000,2000,3000,4000,6000,8000).")
    var frequencies: String?

    @Option(help: "supra-aural, insert or circumaural.")
    var transducer: Transducer = .supraAural

    @Option(help: "Calibration profile (JSON, from 'earshot calibration create'). Required to play tones.")
    var calibration: String?

    @Option(help: "Never play above this hearing level.")
    var capDbhl: Double = Calibration.defaultCapDBHL

    @Option(help: "Seed for catch trials and ear order (default: from the clock).")
    var seed: UInt64?

    @Option(help: "Keep the result under this person's name.")
    var person: String?

    @OptionGroup var data: DataFolderOption

    @Option(help: "Results database file (default: results.sqlite in the data folder).")
    var db: String?

    @OptionGroup var outputDevice: OutputDeviceOption

    func run() throws {
        let profile: CalibrationProfile
        if let calibration {
            profile = try CalibrationProfile.load(path: calibration)
            guard profile.transducer == transducer else {
                throw EarshotError.invalidArgument("calibration '\(profile.name)' is for \(profile.transducer.rawValue) earphones, not \(transducer.rawValue)")
            }
        } else {
            guard `protocol` != nil else {
                throw EarshotError.invalidArgument("playing tones needs a calibration profile (--calibration FILE): without one, levels are not hearing levels")
            }
            profile = .nominal(transducer: transducer)
        }
        let calibrated = try Calibration(profile: profile, capDBHL: capDbhl)
        let plan = try TestPlan(frequencies: try parseFrequencies(), calibration: calibrated)
        let seed = self.seed ?? UInt64(Date().timeIntervalSince1970 * 1000)
        let session = TestSession(procedure: procedure.make(plan: plan, seed: seed), transducer: transducer, seed: seed)
        let store = try person.map { _ in try ResultStore(path: data.resultsPath(db: db)) }  // fail before testing, not after
        if `protocol` != nil {
            try session.runLineProtocol(readLine: { readLine() }, write: FileHandle.standardOutput.write)
        } else {
            let player = try DeviceTonePlayer(calibration: calibrated, device: outputDevice.outputDevice)
            defer { player.close() }
            let keys = try KeyReader()
            defer { keys.restore() }
            Terminal.note("Hearing test: press L (left) or R (right) as soon as you hear a tone in that ear; Q stops.")
            try session.runWithTones(player, seed: seed, key: keys.next)
        }
        let result = session.result
        if let store, let person {
            let id = try store.save(result, person: person, calibration: profile.name)
            Terminal.note("Saved as test \(id) for \(person): 'earshot audiogram show \(id)\(db.map { " --db \(shellWord($0))" } ?? data.data.map { " --data \(shellWord($0))" } ?? "")'")
        }
        if `protocol` == nil { print(result.summaryText()) }
    }

    private func parseFrequencies() throws -> [Double] {
        guard let frequencies else { return AudiometricFrequencies.standard }
        let values = frequencies.split(separator: ",").map { Double($0.trimmingCharacters(in: .whitespaces)) }
        guard !values.isEmpty, values.allSatisfy({ $0 != nil }) else {
            throw EarshotError.invalidArgument("--frequencies must be numbers in Hz separated by commas, not '\(frequencies)'")
        }
        for f in values.compactMap({ $0 }) { _ = try transducer.retspl(atHz: f) }
        return values.compactMap { $0 }
    }
}

extension ProcedureKind: ExpressibleByArgument {}
extension Transducer: ExpressibleByArgument {}
