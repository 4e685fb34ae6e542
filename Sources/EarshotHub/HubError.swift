import EarshotCore

/// What the hub, its database and its store of enrolled sounds can refuse.
public enum HubError: EarshotFailure, Equatable {
    case dataFolderIsAFile(String)
    case notAnAddressHere(host: String)
    case portInUse(Int, host: String)
    case cannotBind(Int, host: String, reason: String)
    case unusableDatabase(path: String, reason: String)
    case unreadableTokens(path: String)
    case soundName(String)
    case soundEnrolled(String)
    case noSuchSound(String)
    case noSoundsEnrolled

    public var description: String {
        switch self {
        case .dataFolderIsAFile(let path): "the data folder \(path) is a file, not a folder"
        case .notAnAddressHere(let host): "\(host) is not an address of this machine"
        case .portInUse(let port, let host): "port \(port) on \(host) is in use (another hub?)"
        case .cannotBind(let port, let host, let reason): "port \(port) on \(host) \(reason)"
        case .unusableDatabase(let path, let reason): "\(path): not a usable hub database (\(reason))"
        case .unreadableTokens(let path): "cannot read the tokens file \(path)"
        case .soundName(let name): "a sound's name is 1–40 letters, digits, _ and - (like front_door), not '\(name)'"
        case .soundEnrolled(let name): "a sound named '\(name)' is already enrolled"
        case .noSuchSound(let name): "no sound named '\(name)' is enrolled"
        case .noSoundsEnrolled: "no sounds are enrolled"
        }
    }
}
