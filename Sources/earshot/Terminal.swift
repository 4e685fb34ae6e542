import ArgumentParser
import Atomics
import EarshotAlerts
import EarshotAudiometry
import EarshotDSP
import EarshotCore
import EarshotHub
import EarshotHubClient
import EarshotIO
import EarshotListening
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
        case AudiometryError.notAnAudiogramOrTest: "--audiogram \(error)"
        case AudiometryError.noResults: "\(error) (run 'earshot hearing-test run --person NAME')"
        case RoomError.generationOverflows: "\(error) (--normalize peak or loudness)"
        case RoomError.tooManyImages: "\(error) (--max-order)"
        case HubClientError.notAHubURL(let text): "\(hubOption) must be an http:// or https:// URL, not '\(text)'"
        case HubClientError.noToken: "\(hubOption) needs --token (earshot token create on the hub)"
        case HubClientError.noNotifier: "--notify needs notify-send (apt install libnotify-bin)"
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
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        print(String(decoding: try encoder.encode(value), as: UTF8.self))
    }
}

/// A one-line progress bar on stderr, drawn only when stderr is a terminal (quiet in pipes and
/// logs) and at most ten times a second.
final class ProgressBar {
    private let label: String
    private var total: Int
    private var lastDraw = Date.distantPast
    private var drawn = false

    /// `total` 0: given with each update, or unknown (nothing is drawn).
    init(label: String, total: Int = 0) {
        self.label = label
        self.total = total
    }

    func update(_ done: Int, of total: Int) {
        self.total = total
        update(done)
    }

    func update(_ done: Int) {
        guard Terminal.standardErrorIsTerminal, total > 0, Date().timeIntervalSince(lastDraw) >= 0.1 else { return }
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

/// Single key presses from the terminal, without waiting for Enter.
final class KeyReader {
    private var original = termios()
    private let isTerminal: Bool

    init() throws {
        isTerminal = isatty(STDIN_FILENO) != 0
        guard isTerminal else { throw EarshotError.invalidArgument("the interactive test needs a terminal; use --protocol jsonl to drive it from a program") }
        tcgetattr(STDIN_FILENO, &original)
        var raw = original
        raw.c_lflag &= ~tcflag_t(ICANON | ECHO)
        tcsetattr(STDIN_FILENO, TCSANOW, &raw)
    }

    func restore() {
        if isTerminal { tcsetattr(STDIN_FILENO, TCSANOW, &original) }
    }

    /// The next key within the timeout, or nil.
    func next(timeoutSeconds: Double) -> Character? {
        var descriptor = pollfd(fd: STDIN_FILENO, events: Int16(POLLIN), revents: 0)
        guard poll(&descriptor, 1, Int32(timeoutSeconds * 1000)) > 0 else { return nil }
        var byte: UInt8 = 0
        return read(STDIN_FILENO, &byte, 1) == 1 ? Character(UnicodeScalar(byte)) : nil
    }
}

extension OutputStyle {
    /// One line per finished event on stdout; onsets only in text (as they happen).
    func print(_ change: AlertEventTracker.Change) {
        switch (self, change) {
        case (.json, .ended(let event)), (.jsonl, .ended(let event)): Swift.print(EventRecord(event).jsonLine)
        case (.text, .ended(let event)): Swift.print(event.textLine)
        default: break
        }
        fflush(nil)  // each event as it is found, even into a pipe
    }

    /// One announcement of `watch` on stdout, as it happens; watching a file, with where in it
    /// it was announced (`start`, seconds from the file's start).
    func print(_ announcement: EventFanOut.Announcement, position: Double? = nil) {
        Swift.print(self == .text ? announcement.textLine(position: position) : EventRecord(announcement, position: position).jsonLine)
        fflush(nil)  // each event as it is announced, even into a pipe
    }
}
