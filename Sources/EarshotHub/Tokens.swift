import EarshotCore
import Foundation

/// The bearer tokens a hub accepts: one per line in `tokens` in its data folder, readable by
/// its owner only.
public struct TokenStore: Sendable {
    public let path: String

    public init(directory: String) {
        path = (directory as NSString).appendingPathComponent("tokens")
    }

    public func all() throws -> [String] {
        guard FileManager.default.fileExists(atPath: path) else { return [] }
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw HubError.unreadableTokens(path: path)
        }
        return text.split(whereSeparator: \.isNewline).map(String.init).filter { !$0.isEmpty }
    }

    /// Makes, keeps and returns a new token: 32 letters and digits, about 190 random bits.
    /// Letters and digits only, so a token is never taken for an option on a command line.
    public func create() throws -> String {
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
        let token = String((0..<32).map { _ in alphabet.randomElement(using: &generator)! })
        let text = (try all() + [token]).joined(separator: "\n") + "\n"
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try AtomicFile.write(Data(text.utf8), to: path)
        chmod(path, 0o600)
        return token
    }

    /// Whether `candidate` is one of `tokens`, in time that does not depend on where they differ.
    public static func matches(_ candidate: String, _ tokens: [String]) -> Bool {
        let given = Array(candidate.utf8)
        var found = false
        for token in tokens {
            let expected = Array(token.utf8)
            var difference = UInt8(given.count == expected.count ? 0 : 1)
            for i in 0..<expected.count { difference |= expected[i] ^ (i < given.count ? given[i] : 0) }
            found = found || difference == 0
        }
        return found
    }
}
