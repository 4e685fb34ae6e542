import ArgumentParser
import EarshotAudiometry
import EarshotCore
import EarshotDSP
import EarshotEnhance
import EarshotHearingAid
import EarshotIO
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

    @Option(help: "Drive the test over stdin/stdout in this protocol instead of playing tones.") var `protocol`: LineFormat?
    @Option(help: "hughson_westlake, quick or bayesian.") var procedure: ProcedureKind = .hughsonWestlake
    @Option(help: "Test frequencies in Hz, comma-separated (default 250,500,1000,2000,3000,4000,6000,8000).") var frequencies: String?
    @Option(help: "supra_aural, insert or circumaural.") var transducer: Transducer = .supraAural
    @Option(help: "Calibration profile (JSON, from 'earshot calibration create'). Required to play tones.") var calibration: String?
    @Option(help: "Never play above this hearing level.") var capDbhl: Double = Calibration.defaultCapDBHL
    @Option(help: "Seed for catch trials and ear order (default: from the clock).") var seed: UInt64?
    @Option(help: "Keep the result under this person's name.") var person: String?
    @OptionGroup var database: DatabaseOption
    @OptionGroup var outputDevice: OutputDeviceOption

    func run() throws {
        let profile: CalibrationProfile
        if let calibration {
            profile = try CalibrationProfile.load(path: calibration)
            try profile.requireTransducer(transducer)
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
        let store = try person.map { _ in try ResultStore(path: database.path) }  // fail before testing, not after
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
            Terminal.note("Saved as test \(id) for \(person): 'earshot audiogram show \(id)\(database.spelledOut)'")
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

/// `earshot audiogram list|show`: stored hearing tests.
struct AudiogramCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "audiogram", abstract: "Stored hearing tests: list them, show one, draw its audiogram.",
        subcommands: [AudiogramList.self, AudiogramShow.self])
}

struct AudiogramList: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "List stored hearing tests, newest first.")

    @OptionGroup var database: DatabaseOption
    @Option(help: OutputStyle.help) var format: OutputStyle = .text

    func run() throws {
        let tests = try database.open().all()
        if format.isJSON {
            try Terminal.printJSON(tests)
            return
        }
        if tests.isEmpty { print("No stored tests.") }
        let dates = ISO8601DateFormatter()
        for test in tests {
            let summary = AudiogramSummary(thresholds: test.result.thresholds)
            let grades = summary.ears.map { "\($0.ear.rawValue) \($0.whoGrade ?? "–")" }.joined(separator: ", ")
            let flag = test.result.reliability.isReliable ? "" : "  ⚠ unreliable"
            print("\(test.id)  \(dates.string(from: test.takenAt))  \(test.person)  \(test.result.procedure), \(test.result.transducer.rawValue)  \(grades)\(flag)")
        }
    }
}

struct AudiogramShow: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show", abstract: "Show a stored test: thresholds, pure-tone averages, WHO grades, the fitting's gains, reliability; draw its audiogram.")

    @Argument(help: "The test's id (from 'earshot audiogram list').") var id: Int64
    @OptionGroup var database: DatabaseOption
    @Option(help: "Write the audiogram chart as SVG.") var svg: String?
    @Option(help: "Write the audiogram chart as PNG (needs rsvg-convert).") var png: String?
    @Option(help: OutputStyle.help) var format: OutputStyle = .text

    func run() throws {
        let test = try database.open().test(id: id)
        let title = "\(test.person), \(ISO8601DateFormatter().string(from: test.takenAt).prefix(10)) — \(test.result.transducer.rawValue), \(test.result.procedure)"
        let chart = AudiogramChart.svg(thresholds: test.result.thresholds, title: title)
        if let svg { try AtomicFile.write(Data(chart.utf8), to: svg) }
        if let png { try ChartImage.writePNG(svg: chart, to: png) }
        if format.isJSON {
            struct Shown: Encodable { var test: StoredTest; var summary: AudiogramSummary; var fitting: Fitting? }
            try Terminal.printJSON(Shown(test: test, summary: AudiogramSummary(thresholds: test.result.thresholds), fitting: test.result.defaultFitting))
            return
        }
        print("Test \(test.id): \(title)")
        print(test.result.summaryText(fittingHint: "earshot fit --audiogram \(test.id) for all of it"))
    }
}

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

    @Option(help: "supra_aural, insert or circumaural.") var transducer: Transducer = .supraAural
    @Option(help: "A name for the headphones and volume setting.") var name: String
    @Option(help: "Full-scale sound pressure levels, FREQ=dBSPL,…") var measured: String?
    @Option(help: "Normal-hearing thresholds in dBFS, FREQ=dBFS,…") var biological: String?
    @Option(help: "left, right or both.") var ear: String = "both"
    @Flag(help: "Add to the profile already in OUTPUT instead of replacing it.") var add = false
    @Option(name: .shortAndLong, help: "The profile file (JSON).") var output: String

    func run() throws {
        let ears: [Ear] = switch ear {
        case "both": [.left, .right]
        case "left": [.left]
        case "right": [.right]
        default: throw EarshotError.invalidArgument("--ear must be left, right or both, not '\(ear)'")
        }
        var profile: CalibrationProfile
        switch (measured, biological) {
        case (let text?, nil):
            profile = try .measured(name: name, transducer: transducer, fullScaleSPL: try parsePairs(text), ears: ears)
        case (nil, let text?):
            let values = try parsePairs(text)
            guard values.values.allSatisfy({ $0 <= 0 }) else { throw EarshotError.invalidArgument("--biological levels are dBFS, at most 0") }
            profile = try .biological(name: name, transducer: transducer, thresholdsDBFS: Dictionary(uniqueKeysWithValues: ears.map { ($0, values) }))
        default:
            throw EarshotError.invalidArgument("give exactly one of --measured and --biological")
        }
        if add, FileManager.default.fileExists(atPath: output) { profile = try CalibrationProfile.load(path: output).adding(profile) }
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

/// `earshot fit --audiogram …`: the fitting a listener gets, before anything is played.
struct Fit: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show a hearing-aid fitting: gains per band for soft, medium and loud speech, compression, maximum output.",
        discussion: """
            Gains are insertion gains for speech at 50, 65 and 80 dB SPL; the knee is the band \
            level where compression begins; ratios are from soft to medium speech and above \
            medium; the maximum output is per band (the listener's estimated discomfort level, \
            or --max-output-dbspl if lower).
            """)

    @OptionGroup var fitting: FittingOptions
    @Option(help: OutputStyle.help) var format: OutputStyle = .text
    @Option(help: "Also draw the gains as a PNG chart (needs rsvg-convert).") var png: String?

    func run() throws {
        guard let fit = try fitting.fitting() else {
            throw EarshotError.invalidArgument("fit needs the listener's audiogram: --audiogram FILE.json or a stored test's id")
        }
        if let png { try ChartImage.writePNG(svg: FittingChart.svg(fit, title: "Hearing-aid fitting: \(fit.rule.name)"), to: png) }
        if format.isJSON {
            try Terminal.printJSON(fit)
            return
        }
        print(fit.tableText)
    }
}

/// `earshot amplify IN -o OUT --audiogram …`: a hearing aid's amplification for one listener.
struct Amplify: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Amplify a recording for a listener's hearing loss: a prescription from the audiogram, multiband compression, a maximum output.",
        discussion: """
            A mono input is heard by both ears; a stereo input is left and right. The output is \
            stereo: the left ear's fitting on the left, the right's on the right. Without a \
            calibration profile, a full-scale sine is 100 dB SPL at the input and at the ear. \
            The compressor runs at 16 or 48 kHz (other rates are resampled) with 7.9 ms of delay, \
            compensated in the output; a limiter inside that delay holds the peaks under \
            --max-output-dbspl (or just under full scale, where the playback cannot reach it), \
            and no output sample exceeds it. See \
            'earshot fit' for the gains.
            """)

    @Argument(help: "Input file, or - for raw PCM on stdin.") var input: String
    @Option(name: .shortAndLong, help: "Output file, or - for raw PCM on stdout.") var output: String
    @OptionGroup var fitting: FittingOptions
    @Flag(help: "Print the chain and its delay on stderr.") var verbose = false
    @OptionGroup var raw: RawStreamOptions

    func run() throws {
        try OutputPath.refuseOverwriting(output, inputs: [input])
        guard let fit = try fitting.fitting() else {
            throw EarshotError.invalidArgument("amplify needs the listener's audiogram: --audiogram FILE.json or a stored test's id")
        }
        let profile = try fitting.profile()
        let compressor = try WideDynamicRangeCompressor(try fit.compression(calibration: profile))
        let ceiling = try fit.ceilingDBFS(calibration: profile)
        if let note = try fit.unreachableOutputNote(calibration: profile, limitDBFS: ceiling) { Terminal.note("note: \(note)") }
        let source = try raw.endpoints.openSource(input)
        guard source.channelCount <= 2 else {
            throw EarshotError.invalidArgument("\(input): \(source.channelCount) channels; amplify takes mono, or stereo as left and right")
        }
        let run = NativeRateRun(source: source, output: output, endpoints: raw.endpoints, channelCount: 2,
                                nativeRate: NoiseSuppressor.nativeRate(for: source.sampleRate))
        let latency = try run.run("Amplifying", compressor, outputGuard: OutputLevelGuard(ceilingDBFS: ceiling))
        if verbose {
            let milliseconds = Double(latency) / run.nativeRate * 1000
            Terminal.note("\(fit.rule.rawValue) compressor at \(Int(run.nativeRate)) Hz (\(String(format: "%.2f", milliseconds)) ms, compensated) with a look-ahead limiter inside that delay → output guard at \(String(format: "%.1f", ceiling)) dBFS")
        }
    }
}
