@testable import EarshotAlerts
import EarshotHubClient
@testable import EarshotListening
import Foundation
import Testing

/// The one event record every command prints and the hub serves, and the names it had before.
struct EventRecordTests {
    func decoded(_ line: String) throws -> EventRecord {
        try JSONDecoder().decode(EventRecord.self, from: Data(line.utf8))
    }

    @Test func alertsCarryTheirFormerClassForOneRelease() throws {
        let record = EventRecord(kind: .alert, label: "siren", start: 12.344, end: 17.8, confidence: 0.9712, formerNames: .alert)
        #expect(record.jsonLine == #"{"class":"siren","confidence":0.971,"end":17.8,"kind":"alert","label":"siren","start":12.34}"#)
        #expect(try decoded(record.jsonLine) == EventRecord(kind: .alert, label: "siren", start: 12.34, end: 17.8, confidence: 0.971))
    }

    @Test func enrolledSoundsCarryTheirFormerSoundAndScore() throws {
        let line = EventRecord(kind: .sound, label: "front_door", start: 3, end: 4.5, confidence: 0.8126, formerNames: .sound).jsonLine
        #expect(line == #"{"confidence":0.813,"end":4.5,"kind":"sound","label":"front_door","score":0.813,"sound":"front_door","start":3}"#)
        // A line a script wrote with the former names alone reads as the same event.
        let former = try decoded(#"{"sound":"front_door","start":3,"end":4.5,"score":0.813}"#)
        #expect(former == EventRecord(kind: .sound, label: "front_door", start: 3, end: 4.5, confidence: 0.813))
        #expect(try decoded(#"{"class":"smoke_alarm","start":1,"end":2,"confidence":0.5}"#).kind == .alert)
    }

    @Test func liveAnnouncementsHaveATimeAndWatchedFilesAPosition() throws {
        let live = EventRecord(kind: .sound, label: "washer", time: "2026-11-24T13:46:40.815Z", confidence: 0.71, quiet: false)
        #expect(live.jsonLine == #"{"confidence":0.71,"kind":"sound","label":"washer","quiet":false,"time":"2026-11-24T13:46:40.815Z"}"#)
        let watched = EventRecord(kind: .alert, label: "doorbell", start: 4.921, time: "2026-11-24T13:46:40.815Z", confidence: 0.7,
                                  quiet: false, formerNames: .position)
        #expect(watched.jsonLine.contains(#""position":4.92"#) && watched.jsonLine.contains(#""start":4.92"#))
        #expect(try decoded(#"{"kind":"alert","label":"doorbell","position":4.92,"confidence":0.7}"#).start == 4.92)
    }

    @Test func whatCannotBeWrittenIsLeftOutAndWhatIsMissingIsRefused() throws {
        let record = EventRecord(kind: .alert, label: "siren", start: .nan, end: .infinity, confidence: .nan)
        #expect(record.jsonLine == #"{"kind":"alert","label":"siren"}"#)
        #expect(throws: DecodingError.self) { try decoded(#"{"start":1}"#) }
        #expect(throws: DecodingError.self) { try decoded(#"{"label":"siren"}"#) }
        #expect(throws: DecodingError.self) { try decoded(#"{"kind":"party","label":"siren"}"#) }
    }

    /// One time format in and out of the hub: what a producer posts is ISO 8601, as the hub
    /// answers, to the millisecond; Unix seconds from other producers are still read.
    @Test func postedEventsCarryISOTimes() throws {
        let event = EventSubmission(kind: .sound, label: "front_door", time: 1_764_000_000.125, confidence: 0.8)
        let object = try #require(try JSONSerialization.jsonObject(with: event.jsonData) as? [String: Any])
        #expect(object["time"] as? String == "2025-11-24T16:00:00.125Z")
        #expect(abs(try EventSubmission(json: event.jsonData).time - event.time) < 0.001)
        let unix = try EventSubmission(json: Data(#"{"kind":"alert","label":"siren","time":1764000000}"#.utf8))
        #expect(unix.time == 1_764_000_000)
    }

    /// What `detect` and `watch` print: the record as JSON, or a line of text, from one event.
    @Test func eventsAsRecordsAndLines() throws {
        let alert = AlertEvent(alertClass: .smokeAlarm, start: 4.25, end: 9.5, confidence: 0.934)
        #expect(alert.textLine == "    4.25–9.50 s  smoke_alarm  (confidence 0.93)")
        #expect(try decoded(EventRecord(alert).jsonLine) == EventRecord(kind: .alert, label: "smoke_alarm", start: 4.25, end: 9.5, confidence: 0.934))
        let ring = EventFanOut.Announcement(kind: .sound, label: "front_door", time: Date(timeIntervalSince1970: 1_764_000_000.125),
                                            confidence: 0.71, quiet: true, key: "k")
        #expect(ring.textLine(position: nil) == "2025-11-24T16:00:00.125Z  sound front_door (0.71)  [quiet]")
        #expect(ring.textLine(position: 4.92) == "2025-11-24T16:00:00.125Z  sound front_door (0.71)  at 4.92 s  [quiet]")
        let watched = try decoded(EventRecord(ring, position: 4.92).jsonLine)
        #expect(watched.start == 4.92 && watched.time == "2025-11-24T16:00:00.125Z" && watched.quiet == true && watched.label == "front_door")
    }
}
