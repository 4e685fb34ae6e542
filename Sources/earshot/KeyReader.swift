import EarshotCore
import Foundation

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
