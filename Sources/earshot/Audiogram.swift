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
            try Terminal.printJSON(Shown(test: test, summary: AudiogramSummary(thresholds: test.result.thresholds), fitting: test.result.defaultFitting))
            return
        }
        print("Test \(test.id): \(title)")
        print(test.result.summaryText(fittingHint: "earshot fit --audiogram \(test.id) for all of it"))
    }
}
