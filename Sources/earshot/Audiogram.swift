import ArgumentParser
import EarshotAudiometry
import EarshotCore
import EarshotHearingAid
import Foundation

/// `earshot audiogram list|show`: stored hearing tests.
struct AudiogramCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "audiogram", abstract: "Stored hearing tests: list them, show one, draw its audiogram.",
        subcommands: [AudiogramList.self, AudiogramShow.self])
}

struct DatabaseOption: ParsableArguments {
    @OptionGroup var data: DataFolderOption

    @Option(help: "Results database file (default: results.sqlite in the data folder).")
    var db: String?

    func open() throws -> ResultStore {
        let path = data.resultsPath(db: db)
        guard FileManager.default.fileExists(atPath: path) else {
            throw EarshotError.invalidArgument("\(path): no results yet (run 'earshot hearing-test run --person NAME')")
        }
        return try ResultStore(path: path)
    }
}

struct AudiogramList: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "List stored hearing tests, newest first.")

    @OptionGroup var database: DatabaseOption

    @Option(help: OutputStyle.help)
    var format: OutputStyle = .text

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

    @Argument(help: "The test's id (from 'earshot audiogram list').")
    var id: Int64

    @OptionGroup var database: DatabaseOption

    @Option(help: "Write the audiogram chart as SVG.")
    var svg: String?

    @Option(help: "Write the audiogram chart as PNG (needs rsvg-convert).")
    var png: String?

    @Option(help: OutputStyle.help)
    var format: OutputStyle = .text

    func run() throws {
        let test = try database.open().test(id: id)
        let title = "\(test.person), \(ISO8601DateFormatter().string(from: test.takenAt).prefix(10)) — \(test.result.transducer.rawValue), \(test.result.procedure)"
        let chart = AudiogramChart.svg(thresholds: test.result.thresholds, title: title)
        if let svg { try AtomicFile.write(Data(chart.utf8), to: svg) }
        if let png { try writePNG(svg: chart, to: png) }
        if format.isJSON {
            struct Shown: Encodable { var test: StoredTest; var summary: AudiogramSummary; var fitting: Fitting? }
            try Terminal.printJSON(Shown(test: test, summary: AudiogramSummary(thresholds: test.result.thresholds), fitting: Self.fitting(test.result)))
            return
        }
        print("Test \(test.id): \(title)")
        Self.printSummary(test.result, id: test.id)
    }

    /// The fitting `earshot fit` prescribes for this result by default; nil where the test
    /// left out frequencies a fitting needs.
    static func fitting(_ result: TestResult) -> Fitting? {
        try? Prescription.fit(PureToneAudiogram(test: result))
    }

    static func printSummary(_ result: TestResult, id: Int64? = nil) {
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
            let pta = ear.pureToneAverageDBHL.map { String(format: "%.1f dB HL", $0) } ?? "– (needs 0.5, 1, 2 and 4 kHz)"
            let grade = ear.whoGrade.map { $0 == "normal" ? "normal hearing" : "\($0) hearing loss" } ?? "–"
            print("\(ear.ear.rawValue) ear: pure-tone average (0.5–4 kHz) \(pta), WHO grade: \(grade)")
        }
        // The gains `earshot fit` prescribes, under the name it prints.
        if let fitting = fitting(result) {
            print("Fitting, \(fitting.rule.name), gain for average speech (65 dB SPL)\(id.map { " — earshot fit --audiogram \($0) for all of it" } ?? ""):")
            for (ear, bands) in [("right", fitting.right), ("left", fitting.left)] {
                print("  \(ear): " + bands.map { "\(Int($0.centreHz)) Hz \(String(format: "%.0f", $0.gainMediumDB)) dB" }.joined(separator: ", "))
            }
        }
        print("\(result.presentations) tones, \(result.reliability.catchTrials) silent trials")
        for flag in result.reliability.flags { print("⚠ \(flag)") }
        for note in result.reliability.notes { print("• \(note)") }
    }
}
