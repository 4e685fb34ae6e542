import EarshotHub
import EarshotHubClient
import EarshotTestSupport
import Foundation
import Testing

/// `earshot watch` on recordings (the microphone path is in Tests/Live/live_watch.py).
@Suite(.serialized) struct WatchCLITests {
    /// Four rings ten seconds apart, at 15 dB over noise.
    static func fourRings() -> [Float] {
        (0..<4).flatMap { chimeScene(notes: [660, 550], at: 4, seconds: 10, snr: 15, seed: UInt64(20 + $0)) }
    }

    static func lines(_ text: String) -> [[String: Any]] {
        text.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    /// HH:MM local, `minutes` from now.
    static func clock(_ minutes: Int) -> String {
        let parts = Calendar.current.dateComponents([.hour, .minute], from: Date().addingTimeInterval(Double(minutes) * 60))
        return String(format: "%02d:%02d", parts.hour!, parts.minute!)
    }

    @Test func announcesOncePerCooldownAndMarksQuietHours() throws {
        try withTemporaryDirectory { dir in
            try writeWAV(chimeRecording(seed: 3), rate: 44_100, to: dir.appendingPathComponent("ring.wav"))
            try writeWAV([Self.fourRings()], rate: 16_000, to: dir.appendingPathComponent("rings.wav"))
            #expect(try earshot("sounds", "enroll", "front_door", "ring.wav", "--data", "s", in: dir).status == 0)

            let cooled = try earshot("watch", "rings.wav", "--data", "s", "--no-alerts", in: dir)
            #expect(cooled.status == 0, "\(cooled.stderr)")
            let events = Self.lines(cooled.stdout)
            // Rings at 4, 14, 24 and 34 s; the default 30 s cooldown lets the first and the last through.
            #expect(events.count == 2, "\(cooled.stdout)")
            #expect(events.allSatisfy { $0["kind"] as? String == "sound" && $0["label"] as? String == "front_door" && $0["quiet"] as? Bool == false })
            let times = events.compactMap { ($0["time"] as? String).flatMap(EventSubmissionTime.parse) }
            if times.count == 2 { #expect(abs(times[1].timeIntervalSince(times[0]) - 30) < 1, "\(times)") }

            let every = try earshot("watch", "rings.wav", "--data", "s", "--no-alerts", "--cooldown", "0", in: dir)
            #expect(Self.lines(every.stdout).count == 4, "\(every.stdout)")
            // Watching a file, each event says where in it the ring is: about a second after each.
            let positions = Self.lines(every.stdout).compactMap { $0["position"] as? Double }
            #expect(positions.count == 4 && zip(positions, [4.0, 14, 24, 34]).allSatisfy { $0 > $1 && $0 < $1 + 2 }, "\(positions)")

            let quiet = try earshot("watch", "rings.wav", "--data", "s", "--no-alerts", "--quiet-hours", "\(Self.clock(-60))-\(Self.clock(60))", in: dir)
            let quietEvents = Self.lines(quiet.stdout)
            #expect(quietEvents.count == 2 && quietEvents.allSatisfy { $0["quiet"] as? Bool == true }, "\(quiet.stdout)")

            for (arguments, message) in [
                (["--quiet-hours", "22-07"], "--quiet-hours must be HH:MM-HH:MM"), (["--cooldown", "-1"], "--cooldown"),
                (["--no-alerts", "--no-sounds"], "nothing to listen for"),
            ] {
                let refused = try runProgram(earshotPath, ["watch", "rings.wav", "--data", "s"] + arguments, directory: dir)
                #expect(refused.status == 2 && refused.stderr.contains(message), "\(arguments): \(refused.stderr)")
            }
            let empty = try earshot("watch", "rings.wav", "--data", "empty", "--no-alerts", in: dir)
            #expect(empty.status == 2 && empty.stderr.contains("no sounds are enrolled"), "\(empty.stderr)")
        }
    }

    /// The alert detector's generic doorbell is not announced beside the user's own, by name.
    @Test func anEnrolledDoorbellIsAnnouncedByItsNameOnly() throws {
        try withTemporaryDirectory { dir in
            try writeWAV(chimeRecording(seed: 3), rate: 44_100, to: dir.appendingPathComponent("ring.wav"))
            try writeWAV([Self.fourRings()], rate: 16_000, to: dir.appendingPathComponent("rings.wav"))
            #expect(try earshot("sounds", "enroll", "front_door", "ring.wav", "--data", "s", in: dir).status == 0)
            let generic = Self.lines(try earshot("watch", "rings.wav", "--data", "s", "--no-sounds", "--cooldown", "0", in: dir).stdout)
            #expect(generic.filter { $0["label"] as? String == "doorbell" }.count >= 2, "the alert detector hears the chime as a doorbell: \(generic)")
            let both = Self.lines(try earshot("watch", "rings.wav", "--data", "s", "--cooldown", "0", in: dir).stdout)
            #expect(both.filter { $0["label"] as? String == "front_door" }.count == 4 && !both.contains { $0["label"] as? String == "doorbell" }, "\(both)")
        }
    }

    /// Events reach the hub; what was heard with a sound is kept, and the dashboard's "not my
    /// doorbell" turns it into a rejected clip that raises the sound's threshold.
    @Test func eventsReachTheHubAndNotMyDoorbellLearns() async throws {
        try await withTemporaryDirectoryAsync { dir in
            let hub = try RunningHub(directory: dir)
            try writeWAV(chimeRecording(seed: 3), rate: 44_100, to: dir.appendingPathComponent("ring.wav"))
            #expect(try earshot("sounds", "enroll", "front_door", "ring.wav", "--data", dir.path, in: dir).status == 0)
            // A television's faint chime, taken for the doorbell.
            try writeWAV([chimeScene(notes: [660, 550], snr: -3, seed: 9)], rate: 16_000, to: dir.appendingPathComponent("tv.wav"))
            let watched = try earshot("watch", "tv.wav", "--data", dir.path, "--no-alerts", "--hub", hub.url, "--token", hub.token, in: dir)
            #expect(watched.status == 0 && Self.lines(watched.stdout).count == 1, "\(watched.stdout) \(watched.stderr)")
            let stored = try await hub.events()
            let event = try #require(stored.first { $0.kind == .sound && $0.label == "front_door" })

            let rejected = try await hub.request(.POST, "/api/events/\(event.id)/reject", token: hub.token)
            #expect(rejected.status == 200 && rejected.body.contains(#""sound":"front_door""#), "\(rejected.status) \(rejected.body); watch said \(watched.stderr)")
            let again = try await hub.request(.POST, "/api/events/\(event.id)/reject", token: hub.token)
            #expect(again.status == 409 && again.body.contains("no recording"), "\(again.body)")
            #expect(try await hub.request(.POST, "/api/events/99999/reject", token: hub.token).status == 404)
            #expect(try await hub.request(.POST, "/api/events/abc/reject", token: hub.token).status == 400)
            #expect(try await hub.request(.POST, "/api/events/\(event.id)/reject").status == 401)
            let alert = try await hub.post(#"{"kind":"alert","label":"siren","time":1}"#)
            let alertID = try #require(alert.body.firstMatch(of: #/"id":(\d+)/#)?.output.1)
            #expect(try await hub.request(.POST, "/api/events/\(alertID)/reject", token: hub.token).status == 409)

            let sounds = try await hub.request(.GET, "/api/sounds", token: hub.token)
            #expect(sounds.body.contains(#""rejected":1"#), "\(sounds.body)")
            // The same television chime is no longer announced; the doorbell still is.
            let after = try earshot("watch", "tv.wav", "--data", dir.path, "--no-alerts", in: dir)
            #expect(Self.lines(after.stdout).isEmpty, "\(after.stdout)")
            try writeWAV([chimeScene(notes: [660, 550], snr: 15, seed: 10)], rate: 16_000, to: dir.appendingPathComponent("door.wav"))
            #expect(Self.lines(try earshot("watch", "door.wav", "--data", dir.path, "--no-alerts", in: dir).stdout).count == 1)
        }
    }

    /// A hub that is down does not lose events: they wait in the spool and go at the next run.
    @Test func eventsWaitInTheSpoolUntilTheHubIsBack() async throws {
        try await withTemporaryDirectoryAsync { dir in
            let hub = try RunningHub(directory: dir)
            let token = hub.token, url = hub.url
            hub.kill()
            try writeWAV(chimeRecording(seed: 3), rate: 44_100, to: dir.appendingPathComponent("ring.wav"))
            #expect(try earshot("sounds", "enroll", "front_door", "ring.wav", "--data", dir.path, in: dir).status == 0)
            try writeWAV([chimeScene(notes: [660, 550], snr: 15, seed: 10)], rate: 16_000, to: dir.appendingPathComponent("door.wav"))
            let offline = try earshot("watch", "door.wav", "--data", dir.path, "--no-alerts", "--hub", url, "--token", token, in: dir)
            #expect(offline.status == 0 && offline.stderr.contains("kept in"), "\(offline.stderr)")
            let spool = dir.appendingPathComponent("watch-spool.jsonl")
            let spooled = try String(contentsOf: spool, encoding: .utf8)
            #expect(spooled.split(separator: "\n").count == 1 && spooled.contains(#""label":"front_door""#), "\(spooled)")

            try hub.start(port: hub.port)
            try writeWAV([chimeScene(notes: [880], snr: -40, seed: 11)], rate: 16_000, to: dir.appendingPathComponent("quiet.wav"))
            let online = try earshot("watch", "quiet.wav", "--data", dir.path, "--no-alerts", "--hub", url, "--token", token, in: dir)
            #expect(online.status == 0 && online.stderr.contains("sending 1 event(s) kept from an earlier run"), "\(online.stderr)")
            #expect(try await hub.events().filter { $0.label == "front_door" }.count == 1)
            #expect(!FileManager.default.fileExists(atPath: spool.path))
        }
    }
}

enum EventSubmissionTime {
    static func parse(_ text: String) -> Date? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.date(from: text)
    }
}
