import Foundation

/// Where Earshot keeps what it stores (results, the hub's events, tokens): `$EARSHOT_HOME`,
/// else `$XDG_DATA_HOME/earshot`, else `~/.local/share/earshot`.
public enum DataDirectory {
    public static var path: String {
        let environment = ProcessInfo.processInfo.environment
        if let home = environment["EARSHOT_HOME"], !home.isEmpty { return home }
        let base = environment["XDG_DATA_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? (NSHomeDirectory() as NSString).appendingPathComponent(".local/share")
        return (base as NSString).appendingPathComponent("earshot")
    }
}
