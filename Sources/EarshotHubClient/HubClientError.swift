import EarshotCore

/// What a producer or follower of a hub can refuse: the hub's or the broker's address, the token.
public enum HubClientError: EarshotFailure, Equatable {
    case notAHubURL(String)
    case noToken
    case tokenRefused
    case notABrokerURL(String)
    /// Desktop notifications asked for, on a machine without notify-send.
    case noNotifier

    public var description: String {
        switch self {
        case .notAHubURL(let text): "the hub's address must be an http:// or https:// URL, not '\(text)'"
        case .noToken: "the hub needs a token"
        case .tokenRefused: "the hub refused the token"
        case .notABrokerURL(let text): "the MQTT broker's address must be mqtt://HOST[:PORT], not '\(text)'"
        case .noNotifier: "desktop notifications need notify-send (apt install libnotify-bin)"
        }
    }
}
