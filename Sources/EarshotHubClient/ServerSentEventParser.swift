/// Server-Sent Events, as they arrive in arbitrary chunks.
public struct ServerSentEventParser: Sendable {
    public struct Message: Equatable, Sendable {
        public var id: String?
        public var event: String?
        public var data: String
    }

    private var pending = ""
    private var id: String?
    private var event: String?
    private var data: [String] = []

    public init() {}

    /// The messages completed by `text`.
    public mutating func feed(_ text: String) -> [Message] {
        pending += text
        var messages: [Message] = []
        while let newline = pending.firstIndex(where: { $0 == "\n" || $0 == "\r\n" || $0 == "\r" }) {
            let line = String(pending[..<newline])
            pending = String(pending[pending.index(after: newline)...])
            if line.isEmpty {
                if !data.isEmpty { messages.append(Message(id: id, event: event, data: data.joined(separator: "\n"))) }
                data = []
                event = nil
                continue
            }
            if line.hasPrefix(":") { continue }
            let (field, value): (Substring, Substring)
            if let colon = line.firstIndex(of: ":") {
                field = line[..<colon]
                var rest = line[line.index(after: colon)...]
                if rest.hasPrefix(" ") { rest = rest.dropFirst() }
                value = rest
            } else {
                (field, value) = (Substring(line), "")
            }
            switch field {
            case "id": id = String(value)
            case "event": event = String(value)
            case "data": data.append(String(value))
            default: break
            }
        }
        return messages
    }
}
