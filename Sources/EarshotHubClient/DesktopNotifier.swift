import EarshotCore
import Foundation

/// Desktop notifications through `notify-send`.
public struct DesktopNotifier: Sendable {
    public let executable: String

    public init() throws {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        let candidates = path.split(separator: ":").map { "\($0)/notify-send" }
        guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw HubClientError.noNotifier
        }
        executable = found
    }

    /// Alerts are critical (they stay until dismissed); other events normal; events that came
    /// while the hub was snoozed or in quiet hours raise nothing.
    public func show(_ json: String) {
        guard let object = try? JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any],
              let label = object["label"] as? String, let kind = object["kind"] as? String,
              object["quiet"] as? Bool != true else { return }
        let name = label.replacingOccurrences(of: "_", with: " ")
        var body = kind
        if let source = object["source"] as? String { body += " at \(source)" }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = ["--app-name=Earshot", "--urgency=\(kind == "alert" ? "critical" : "normal")", "Earshot: \(name)", body]
        try? process.run()
    }
}
