import ArgumentParser
import EarshotCore
import Foundation

@main
struct Earshot: AsyncParsableCommand {
    static let version = "0.1.0"

    static let configuration = CommandConfiguration(
        commandName: "earshot",
        abstract: "Hearing assistance and sound awareness: enhance speech, never lose an alert.",
        version: version,
        subcommands: [
            Info.self, Convert.self, Devices.self, Record.self, Play.self, Room.self,
            Enhance.self, Amplify.self, Fit.self, Listen.self, Detect.self, Synth.self, HearingTest.self, AudiogramCommand.self, CalibrationCommand.self, Demo.self,
            Serve.self, TokenCommand.self, Monitor.self, SoundsCommand.self, Watch.self, Soundcheck.self, EchoCancel.self, Capture.self,
        ]
    )

    /// One line on stderr and a meaningful exit code for every failure: 2 for bad input
    /// (including bad arguments), 1 for Earshot's own faults, 0 for help and version.
    static func main() async {
        do {
            let arguments = Array(CommandLine.arguments.dropFirst())
            if let unknown = CommandSuggestion.unknownCommand(in: arguments, under: Earshot.self) {
                Terminal.error(unknown)
                Foundation.exit(2)
            }
            var command = try parseAsRoot(CommandSuggestion.joiningNegativeValues(arguments))
            if var command = command as? AsyncParsableCommand {
                try await command.run()
            } else {
                try command.run()
            }
        } catch let error as EarshotFailure {
            Terminal.error(Terminal.sentence(for: error))
            Foundation.exit(error.isBadInput ? 2 : 1)
        } catch let code as ExitCode {
            Foundation.exit(code.rawValue)
        } catch {
            let code = exitCode(for: error)
            if code == .success { exit(withError: error) }
            Terminal.error(message(for: error))
            Foundation.exit(code == .validationFailure ? 2 : 1)
        }
    }
}

/// What the argument parser does not say by itself: which command a mistyped one was meant to
/// be, and that `--gain -6` gives the option a negative value rather than a new option.
enum CommandSuggestion {
    /// `--name -6` → `--name=-6`: a negative number after an option is that option's value.
    static func joiningNegativeValues(_ arguments: [String]) -> [String] {
        var joined: [String] = []
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            if argument == "--" { return joined + arguments[index...] }  // what follows is positional, as written
            if argument.hasPrefix("--"), argument.count > 2, !argument.contains("="), index + 1 < arguments.count,
               isNegativeNumber(arguments[index + 1]) {
                joined.append(argument + "=" + arguments[index + 1])
                index += 2
            } else {
                joined.append(argument)
                index += 1
            }
        }
        return joined
    }

    static func isNegativeNumber(_ text: String) -> Bool {
        text.hasPrefix("-") && text.count > 1 && Double(text) != nil
    }

    /// "no command 'enhnce' (did you mean 'enhance'?)" where a word names no subcommand of the
    /// command before it; nil when every command word is known.
    static func unknownCommand(in arguments: [String], under root: ParsableCommand.Type) -> String? {
        var command = root
        var path = [root._commandName]
        for word in arguments {
            if word.hasPrefix("-") || word == "help" { return nil }  // options, help and what follows are the parser's
            let subcommands = command.configuration.subcommands
            guard !subcommands.isEmpty else { return nil }
            let names = subcommands.map { $0._commandName }
            guard let index = names.firstIndex(of: word) else {
                let nearest = names.map { ($0, distance($0, word)) }.min { $0.1 < $1.1 }
                let hint = nearest.flatMap { $0.1 <= max(2, word.count / 3) ? " (did you mean '\($0.0)'?)" : nil } ?? ""
                return "no command '\(word)' in \(path.joined(separator: " "))\(hint); '\(path.joined(separator: " ")) --help' lists them"
            }
            command = subcommands[index]
            path.append(word)
        }
        return nil
    }

    /// Edit distance (insertions, deletions, substitutions).
    static func distance(_ a: String, _ b: String) -> Int {
        let b = Array(b)
        var row = Array(0...b.count)
        for (i, x) in a.enumerated() {
            var diagonal = row[0]
            row[0] = i + 1
            for (j, y) in b.enumerated() {
                let above = row[j + 1]
                row[j + 1] = min(above + 1, row[j] + 1, diagonal + (x == y ? 0 : 1))
                diagonal = above
            }
        }
        return row[b.count]
    }
}
