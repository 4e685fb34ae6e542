import Foundation

/// `text` as one shell word, quoted only where it needs to be: for the commands Earshot prints
/// for a person to run as written.
public func shellWord(_ text: String) -> String {
    let plain = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: "-_./=:,+@%"))
    if !text.isEmpty, text.unicodeScalars.allSatisfy(plain.contains) { return text }
    return "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
}
