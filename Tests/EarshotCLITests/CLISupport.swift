import EarshotTestSupport
import Foundation
import Testing

/// The `earshot` binary built beside this test bundle.
let earshotPath: String = {
    let bundleDirectory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    var candidate = bundleDirectory.appendingPathComponent("earshot").path
    if !FileManager.default.isExecutableFile(atPath: candidate) {
        candidate = URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent(".build/debug/earshot").path
    }
    return candidate
}()

struct CommandResult {
    var status: Int32
    var stdout: String
    var stderr: String
    var stdoutData: Data
}

/// Runs a program to completion, feeding `input` on stdin.
func runProgram(_ executable: String, _ arguments: [String], input: Data? = nil, directory: URL? = nil,
                environment: [String: String]? = nil) throws -> CommandResult {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    if let environment { process.environment = environment }
    if let directory { process.currentDirectoryURL = directory }
    let outPipe = Pipe(), errPipe = Pipe(), inPipe = Pipe()
    process.standardOutput = outPipe
    process.standardError = errPipe
    process.standardInput = inPipe
    try process.run()
    // Feed stdin and drain both outputs concurrently so no pipe fills up and blocks.
    let writer = Thread {
        if let input { inPipe.fileHandleForWriting.write(input) }
        try? inPipe.fileHandleForWriting.close()
    }
    writer.start()
    nonisolated(unsafe) var errData = Data()
    let errReader = Thread { errData = errPipe.fileHandleForReading.readDataToEndOfFile() }
    errReader.start()
    let outData = outPipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    while errReader.isExecuting || !errReader.isFinished { usleep(1000) }
    return CommandResult(
        status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
        stderr: String(decoding: errData, as: UTF8.self), stdoutData: outData)
}

func earshot(_ arguments: String..., input: Data? = nil, in directory: URL? = nil) throws -> CommandResult {
    try runProgram(earshotPath, arguments, input: input, directory: directory)
}

let soxPath: String? = ["/usr/bin/sox", "/usr/local/bin/sox", "/opt/homebrew/bin/sox"].first {
    FileManager.default.isExecutableFile(atPath: $0)
}

func sox(_ arguments: String..., in directory: URL? = nil) throws -> CommandResult {
    try runProgram(try #require(soxPath, "sox is not installed: run make deps"), arguments, directory: directory)
}

/// Parses a value out of sox's "Name : value" or "Name   value" report lines.
func soxField(_ report: String, _ name: String) -> String? {
    for line in report.split(separator: "\n") where line.hasPrefix(name) {
        let rest = line.dropFirst(name.count).trimmingCharacters(in: .whitespaces)
        return rest.hasPrefix(":") ? rest.dropFirst().trimmingCharacters(in: .whitespaces) : rest
    }
    return nil
}
