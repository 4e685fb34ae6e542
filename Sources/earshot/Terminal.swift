import Atomics
import EarshotAudiometry
import EarshotCore
import EarshotDSP
import EarshotHub
import EarshotHubClient
import EarshotIO
import EarshotRoom
import Foundation

/// Everything the CLI says goes through here: results to stdout, diagnostics and progress to stderr.
enum Terminal {
    static func error(_ message: String) {
        FileHandle.standardError.write(Data("earshot: \(message)\n".utf8))
    }

    /// A library's sentence, with what only the command line can add: the option at fault, the
    /// command to run next. `hubOption` is the option that names the hub.
    static func sentence(for error: EarshotFailure, hubOption: String = "--hub") -> String {
        switch error {
        case AudiometryError.noStoredTest: "\(error) (run 'earshot audiogram list')"
        case RoomError.generationOverflows: "\(error) (--normalize peak or loudness)"
        case RoomError.tooManyImages: "\(error) (--max-order)"
        case HubClientError.notAHubURL(let text): "\(hubOption) must be an http:// or https:// URL, not '\(text)'"
        case HubClientError.noToken: "\(hubOption) needs --token (earshot token create on the hub)"
        case HubClientError.notABrokerURL(let text): "--mqtt must be mqtt://HOST[:PORT], not '\(text)'"
        case EarshotError.rawRateMissing: "reading raw PCM from stdin needs --raw-rate (and --raw-channels if not mono)"
        case HubError.dataFolderIsAFile(let path): "--data \(path) is a file, not a folder"
        case HubError.notAnAddressHere(let host): "--host \(host) is not an address of this machine"
        case HubError.portInUse: "\(error): choose another with --port"
        case HubError.soundEnrolled(let name): "\(error) (earshot sounds remove \(name) first)"
        case HubError.noSuchSound: "\(error) (earshot sounds list)"
        case HubError.noSoundsEnrolled: "\(error) (earshot sounds enroll NAME FILE)"
        default: error.description
        }
    }

    static func note(_ message: String) {
        FileHandle.standardError.write(Data("\(message)\n".utf8))
    }

    static var standardErrorIsTerminal: Bool { isatty(STDERR_FILENO) != 0 }

    static func printJSON<T: Encodable>(_ value: T) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        print(String(decoding: try encoder.encode(value), as: UTF8.self))
    }
}

/// A one-line progress bar on stderr, drawn only when stderr is a terminal (quiet in pipes and
/// logs) and at most ten times a second.
final class ProgressBar {
    private let label: String
    private let total: Int
    private let enabled: Bool
    private var lastDraw = Date.distantPast
    private var drawn = false

    init(label: String, total: Int) {
        self.label = label
        self.total = total
        enabled = Terminal.standardErrorIsTerminal && total > 0
    }

    func update(_ done: Int) {
        guard enabled, Date().timeIntervalSince(lastDraw) >= 0.1 else { return }
        lastDraw = Date()
        let fraction = min(1, Double(done) / Double(total))
        let width = 30, filled = Int(fraction * Double(width))
        let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
        FileHandle.standardError.write(Data("\r\(label) [\(bar)] \(Int(fraction * 100))%".utf8))
        drawn = true
    }

    func finish() {
        guard drawn else { return }
        FileHandle.standardError.write(Data("\r\u{1B}[2K".utf8))
    }
}

/// Set by Ctrl-C: live runs end cleanly after the current block and keep what they have.
let interruptRequested = ManagedAtomic<Bool>(false)

/// Routes SIGINT to `interruptRequested` instead of killing the process.
func installInterruptHandler() {
    _ = interruptRequested.load(ordering: .relaxed)  // initialise the global before the handler can run
    signal(SIGINT) { _ in interruptRequested.store(true, ordering: .relaxed) }
}

/// Says so when a file sink had to clip: louder than full scale does not fit an integer format.
func reportClipping(_ sink: AudioSink) {
    if let writer = sink.fileWriter, writer.clippedSamples > 0 {
        Terminal.note("warning: \(writer.clippedSamples) samples beyond full scale were clipped in \(writer.path); use --sample-format f32 to keep them")
    }
}

extension NativeRateRun {
    /// With a progress bar on a terminal, and a word on anything clipped; returns the delay.
    @discardableResult
    func run(_ label: String, _ chain: some AudioProcessor, outputGuard: OutputLevelGuard? = nil) throws -> Int {
        let progress = ProgressBar(label: label, total: (source as? AudioFileReader)?.info.frameCount ?? 0)
        let (latency, sink) = try run(chain, outputGuard: outputGuard, progress: progress.update)
        reportClipping(sink)
        progress.finish()
        return latency
    }
}
