import ArgumentParser
import EarshotAlerts
import EarshotIO
import EarshotListening
import EarshotHubClient
import Foundation

/// An alert event as every command writes it: `{"class","start","end","confidence"}`, times
/// in seconds from the start of the input, confidence 0–1; `detect`, `listen` and `demo` alike.
struct EventRecord: Codable, Equatable {
    var `class`: String
    var start: Double
    var end: Double
    var confidence: Double

    init(_ event: AlertEvent) {
        `class` = event.alertClass.rawValue
        start = (event.start * 100).rounded() / 100
        end = (event.end * 100).rounded() / 100
        confidence = (event.confidence * 100).rounded() / 100
    }
}

extension OutputStyle {
    /// One line per finished event on stdout; onsets only in text (as they happen).
    func print(_ change: AlertEventTracker.Change) {
        switch (self, change) {
        case (.json, .ended(let event)), (.jsonl, .ended(let event)): Swift.print(Self.jsonLine(event))
        case (.text, .ended(let event)):
            Swift.print(String(format: "%8.2f–%.2f s  %@  (confidence %.2f)", event.start, event.end, event.alertClass.rawValue, event.confidence))
        default: break
        }
        fflush(nil)  // each event as it is found, even into a pipe
    }

    /// One announcement of `watch` on stdout, as it happens; watching a file, with its
    /// `position` there (seconds from the file's start).
    func print(_ announcement: EventFanOut.Announcement, position: Double? = nil) {
        let stamp = StoredEvent.iso8601(announcement.time.timeIntervalSince1970)
        switch self {
        case .json, .jsonl:
            let at = position.map { String(format: #","position":%.2f"#, $0) } ?? ""
            Swift.print(String(format: #"{"kind":"%@","label":"%@","time":"%@"%@,"confidence":%.2f,"quiet":%@}"#,
                               announcement.kind.rawValue, announcement.label, stamp, at, announcement.confidence, announcement.quiet ? "true" : "false"))
        case .text:
            let at = position.map { String(format: "  at %.2f s", $0) } ?? ""
            Swift.print(String(format: "%@  %@ %@ (%.2f)%@%@", stamp, announcement.kind.rawValue, announcement.label, announcement.confidence, at,
                               announcement.quiet ? "  [quiet]" : ""))
        }
        fflush(nil)  // each event as it is announced, even into a pipe
    }

    /// One `EventRecord` as a line, keys in the schema's order.
    static func jsonLine(_ event: AlertEvent) -> String {
        let record = EventRecord(event)
        return String(format: "{\"class\":\"%@\",\"start\":%.2f,\"end\":%.2f,\"confidence\":%.2f}",
                      record.class, record.start, record.end, record.confidence)
    }
}
