import EarshotAlerts
import EarshotHub
import EarshotHubClient
import Foundation

extension EventRecord {
    /// An alert the detector heard in a recording, as `detect`, `listen` and `demo` write it.
    public init(_ event: AlertEvent) {
        self.init(kind: .alert, label: event.alertClass.rawValue, start: event.start, end: event.end,
                  confidence: event.confidence, formerNames: .alert)
    }

    /// An announcement of `watch`; watching a file, with where in it (seconds from its start).
    public init(_ announcement: EventFanOut.Announcement, position: Double?) {
        self.init(kind: announcement.kind, label: announcement.label, start: position,
                  time: StoredEvent.iso8601(announcement.time.timeIntervalSince1970), confidence: announcement.confidence,
                  quiet: announcement.quiet, formerNames: position == nil ? nil : .position)
    }
}

extension AlertEvent {
    /// The event as a line of text: where in the recording, the class, the confidence.
    public var textLine: String {
        String(format: "%8.2f–%.2f s  %@  (confidence %.2f)", start, end, alertClass.rawValue, confidence)
    }
}

extension EventFanOut.Announcement {
    /// The announcement as a line of text, with its time; watching a file, where in it.
    public func textLine(position: Double?) -> String {
        let at = position.map { String(format: "  at %.2f s", $0) } ?? ""
        return String(format: "%@  %@ %@ (%.2f)%@%@", StoredEvent.iso8601(time.timeIntervalSince1970), kind.rawValue, label, confidence, at,
                      quiet ? "  [quiet]" : "")
    }
}
