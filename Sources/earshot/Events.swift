import ArgumentParser
import EarshotAlerts
import EarshotIO
import EarshotListening
import EarshotHubClient
import Foundation

extension EventRecord {
    /// An alert the detector heard in a recording, as `detect`, `listen` and `demo` write it.
    init(_ event: AlertEvent) {
        self.init(kind: .alert, label: event.alertClass.rawValue, start: event.start, end: event.end,
                  confidence: event.confidence, formerNames: .alert)
    }

    /// An announcement of `watch`; watching a file, with where in it (seconds from its start).
    init(_ announcement: EventFanOut.Announcement, position: Double?) {
        self.init(kind: announcement.kind, label: announcement.label, start: position,
                  time: StoredEvent.iso8601(announcement.time.timeIntervalSince1970), confidence: announcement.confidence,
                  quiet: announcement.quiet, formerNames: position == nil ? nil : .position)
    }
}

extension OutputStyle {
    /// One line per finished event on stdout; onsets only in text (as they happen).
    func print(_ change: AlertEventTracker.Change) {
        switch (self, change) {
        case (.json, .ended(let event)), (.jsonl, .ended(let event)): Swift.print(EventRecord(event).jsonLine)
        case (.text, .ended(let event)):
            Swift.print(String(format: "%8.2f–%.2f s  %@  (confidence %.2f)", event.start, event.end, event.alertClass.rawValue, event.confidence))
        default: break
        }
        fflush(nil)  // each event as it is found, even into a pipe
    }

    /// One announcement of `watch` on stdout, as it happens; watching a file, with where in it
    /// it was announced (`start`, seconds from the file's start).
    func print(_ announcement: EventFanOut.Announcement, position: Double? = nil) {
        let stamp = StoredEvent.iso8601(announcement.time.timeIntervalSince1970)
        switch self {
        case .json, .jsonl:
            Swift.print(EventRecord(announcement, position: position).jsonLine)
        case .text:
            let at = position.map { String(format: "  at %.2f s", $0) } ?? ""
            Swift.print(String(format: "%@  %@ %@ (%.2f)%@%@", stamp, announcement.kind.rawValue, announcement.label, announcement.confidence, at,
                               announcement.quiet ? "  [quiet]" : ""))
        }
        fflush(nil)  // each event as it is announced, even into a pipe
    }
}
