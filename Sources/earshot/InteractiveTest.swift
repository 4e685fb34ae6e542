import EarshotAudiometry
import EarshotCore
import EarshotDSP
import EarshotIO
import Foundation

/// The hearing test with real tones: each stimulus is played on the output device through the
/// level guard, then the listener has until the answer window closes to press L or R.
struct InteractiveTest {
    let session: TestSession
    let calibration: Calibration
    let device: String?
    let seed: UInt64

    static let answerWindowSeconds = 2.0

    func run() throws {
        let player = try DeviceTonePlayer(calibration: calibration, device: device)
        defer { player.close() }
        let keys = try KeyReader()
        defer { keys.restore() }
        Terminal.note("Hearing test: press L (left) or R (right) as soon as you hear a tone in that ear; Q stops.")
        var random = SeededRandom(seed: seed &+ 99)
        while let stimulus = session.next() {
            usleep(UInt32(Double.random(in: 1.0...3.0, using: &random) * 1_000_000))
            keys.drain()  // presses before the tone do not count
            try player.present(stimulus.isCatchTrial ? nil : stimulus.tone)
            let started = Date()
            let key = keys.next(timeoutSeconds: Self.answerWindowSeconds)
            let answer: Answer
            switch key {
            case "l", "L": answer = .heard(.left)
            case "r", "R": answer = .heard(.right)
            case "q", "Q": throw EarshotError.invalidArgument("test stopped; nothing was saved")
            default: answer = .notHeard
            }
            try session.respond(id: stimulus.id, answer: answer, responseSeconds: key == nil ? nil : Date().timeIntervalSince(started))
        }
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

    func drain() {
        while next(timeoutSeconds: 0) != nil {}
    }
}
