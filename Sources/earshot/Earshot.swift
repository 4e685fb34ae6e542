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
