import ArgumentParser
import EarshotAudiometry
import EarshotCore
import Foundation

/// `earshot audiogram list|show`: stored hearing tests.
struct AudiogramCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "audiogram", abstract: "Stored hearing tests: list them, show one, draw its audiogram.",
        subcommands: [AudiogramList.self, AudiogramShow.self])
}

struct DatabaseOption: ParsableArguments {
    @Option(help: "Results database (default: $EARSHOT_DB or ~/.local/share/earshot/results.sqlite).")
    var db: String?

    func open() throws -> ResultStore {
        let path = db ?? ResultStore.defaultPath
        guard FileManager.default.fileExists(atPath: path) else {
            throw EarshotError.invalidArgument("\(path): no results yet (run 'earshot hearing-test run --person NAME')")
        }
        return try ResultStore(path: path)
    }
}

struct AudiogramList: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "List stored hearing tests, newest first.")

    @OptionGroup var database: DatabaseOption

    @Option(help: "Output format: text or json.")
    var format: OutputStyle = .text

    func run() throws {
        let tests = try database.open().all()
        if format == .json {
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
        commandName: "show", abstract: "Show a stored test: thresholds, pure-tone averages, WHO grades, NAL-R gains, reliability; draw its audiogram.")

    @Argument(help: "The test's id (from 'earshot audiogram list').")
    var id: Int64

    @OptionGroup var database: DatabaseOption

    @Option(help: "Write the audiogram chart as SVG.")
    var svg: String?

    @Option(help: "Write the audiogram chart as PNG (needs rsvg-convert).")
    var png: String?

    @Option(help: "Output format: text or json.")
    var format: OutputStyle = .text

    func run() throws {
        let test = try database.open().test(id: id)
        let title = "\(test.person), \(ISO8601DateFormatter().string(from: test.takenAt).prefix(10)) — \(test.result.transducer.rawValue), \(test.result.procedure)"
        let chart = AudiogramChart.svg(thresholds: test.result.thresholds, title: title)
        if let svg { try AtomicFile.write(Data(chart.utf8), to: svg) }
        if let png { try writePNG(svg: chart, to: png) }
        if format == .json {
            struct Shown: Encodable { var test: StoredTest; var summary: AudiogramSummary }
            try Terminal.printJSON(Shown(test: test, summary: AudiogramSummary(thresholds: test.result.thresholds)))
            return
        }
        print("Test \(test.id): \(title)")
        Self.printSummary(test.result)
    }

    static func printSummary(_ result: TestResult) {
        let frequencies = Set(result.thresholds.map(\.frequencyHz)).sorted()
        print("Hz      " + frequencies.map { String(Int($0)).padding(toLength: 7, withPad: " ", startingAt: 0) }.joined())
        for ear in [Ear.right, .left] {
            let row = frequencies.map { f -> String in
                guard let t = result.thresholds.first(where: { $0.ear == ear && $0.frequencyHz == f }) else { return "–" }
                if let level = t.thresholdDBHL { return String(format: "%.0f", level) }
                return ">\(Int(t.noResponseAtDBHL ?? 0))"
            }
            print(ear.rawValue.padding(toLength: 8, withPad: " ", startingAt: 0) + row.map { $0.padding(toLength: 7, withPad: " ", startingAt: 0) }.joined())
        }
        for ear in AudiogramSummary(thresholds: result.thresholds).ears {
            let pta = ear.pureToneAverageDBHL.map { String(format: "%.1f dB HL", $0) } ?? "–"
            let gains = ear.nalRGainDB.sorted { Double($0.key)! < Double($1.key)! }.map { "\($0.key) Hz \(String(format: "%.0f", $0.value))" }.joined(separator: ", ")
            print("\(ear.ear.rawValue) ear: PTA (0.5–4 kHz) \(pta), WHO grade \(ear.whoGrade ?? "–"); NAL-R gain: \(gains.isEmpty ? "–" : gains) dB")
        }
        print("\(result.presentations) tones, \(result.reliability.catchTrials) silent trials")
        for flag in result.reliability.flags { print("⚠ \(flag)") }
        for note in result.reliability.notes { print("• \(note)") }
    }
}
