import ArgumentParser
import EarshotCore
import EarshotDSP
import EarshotIO

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
