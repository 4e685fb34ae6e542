/// Earshot writes every named value in JSON, files and the command line in snake_case
/// (`smoke_alarm`, `voice_isolation`, `supra_aural`), as Home Assistant's ids must be. The
/// values it once wrote in kebab-case (`voice-isolation`) are still read, and anything typed
/// with hyphens for underscores.
public protocol SnakeCaseValue: CaseIterable, RawRepresentable where RawValue == String {}

extension SnakeCaseValue {
    /// The case this text names, written with underscores or hyphens.
    public static func named(_ text: String) -> Self? {
        let snake = String(text.map { $0 == "-" ? "_" : $0 })
        return allCases.first { $0.rawValue == snake }
    }
}
