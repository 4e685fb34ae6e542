import EarshotHub
import EarshotHubClient
import EarshotTestSupport
import Foundation
import Testing

@Suite struct QuietHoursTests {
    @Test func hoursAcrossMidnightAndWithin() throws {
        let night = try QuietHours(start: "22:00", end: "07:30")
        #expect(night.contains(minuteOfDay: 22 * 60) && night.contains(minuteOfDay: 3 * 60) && night.contains(minuteOfDay: 7 * 60 + 29))
        #expect(!night.contains(minuteOfDay: 7 * 60 + 30) && !night.contains(minuteOfDay: 12 * 60))
        let lunch = try QuietHours(start: "12:00", end: "13:00")
        #expect(lunch.contains(minuteOfDay: 12 * 60 + 30) && !lunch.contains(minuteOfDay: 13 * 60) && !lunch.contains(minuteOfDay: 11 * 60))
        for (start, end) in [("7:00", "08:00"), ("24:00", "08:00"), ("08:00", "08:60"), ("08:00", "08:00"), ("", "08:00")] {
            #expect(throws: HubRequestError.self) { try QuietHours(start: start, end: end) }
        }
    }

    /// Alerts are never quiet; sounds are, while snoozed or inside the hours.
    @Test func alertsAreNeverQuiet() throws {
        let utc = TimeZone(identifier: "UTC")!
        let threeAM = Date(timeIntervalSince1970: Double(1_764_000_000 - 1_764_000_000 % 86_400 + 3 * 3600))
        let settings = HubSettings(quietHours: try QuietHours(start: "22:00", end: "07:00"))
        #expect(settings.isQuiet(.sound, at: threeAM, in: utc) && settings.isQuiet(.test, at: threeAM, in: utc))
        #expect(!settings.isQuiet(.alert, at: threeAM, in: utc))
        #expect(!settings.isQuiet(.sound, at: threeAM.addingTimeInterval(6 * 3600), in: utc))
        let snoozed = HubSettings(snoozeUntil: threeAM.timeIntervalSince1970 + 60)
        #expect(snoozed.isQuiet(.sound, at: threeAM, in: utc) && !snoozed.isQuiet(.sound, at: threeAM.addingTimeInterval(61), in: utc))
    }
}

@Suite(.serialized) struct HubSettingsTests {
    /// Snooze and quiet hours through the API: sounds that arrive then are stored, marked quiet,
    /// and given the lowest ntfy priority; alerts are not touched.
    @Test func snoozeAndQuietHoursMarkSoundsQuiet() async throws {
        try await withTemporaryDirectoryAsync { dir in
            let hub = try RunningHub(directory: dir)
            let initial = try await hub.request(.GET, "/api/settings", token: hub.token)
            #expect(initial.status == 200 && initial.body.contains(#""snoozeUntil":null"#) && initial.body.contains(#""quietNow":false"#))
            #expect(try await hub.request(.GET, "/api/settings").status == 401)

            let snoozed = try await hub.request(.PUT, "/api/settings", token: hub.token, body: #"{"snoozeMinutes":10}"#)
            #expect(snoozed.status == 200 && snoozed.body.contains(#""quietNow":true"#), "\(snoozed.body)")
            _ = try await hub.post(#"{"kind":"sound","label":"doorbell","time":1764000000}"#)
            _ = try await hub.post(#"{"kind":"alert","label":"smoke_alarm","time":1764000001}"#)
            _ = try await hub.request(.PUT, "/api/settings", token: hub.token, body: #"{"snoozeMinutes":0}"#)
            _ = try await hub.post(#"{"kind":"sound","label":"doorbell","time":1764000002}"#)

            // Quiet hours around now, in the hub's time zone (the same as ours).
            let parts = Calendar.current.dateComponents([.hour, .minute], from: Date())
            let now = parts.hour! * 60 + parts.minute!
            func clock(_ minutes: Int) -> String { String(format: "%02d:%02d", (minutes + 1440) % 1440 / 60, (minutes + 1440) % 60) }
            let hours = try await hub.request(.PUT, "/api/settings", token: hub.token,
                                              body: #"{"quietHours":{"start":"\#(clock(now - 1))","end":"\#(clock(now + 3))"}}"#)
            #expect(hours.status == 200 && hours.body.contains(#""quietNow":true"#), "\(hours.body)")
            _ = try await hub.post(#"{"kind":"sound","label":"washing_machine","time":1764000003}"#)
            _ = try await hub.request(.PUT, "/api/settings", token: hub.token, body: #"{"quietHours":null}"#)

            let stored = try await hub.events()
            #expect(stored.map(\.quiet) == [true, false, false, true])
            let poll = try await hub.request(.GET, "/earshot/json?poll=1&since=all", token: hub.token)
            let priorities = poll.body.split(separator: "\n").map { (try! JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any])["priority"] as? Int }
            #expect(priorities == [1, 5, 3, 1])
            // Kept across a restart.
            _ = try await hub.request(.PUT, "/api/settings", token: hub.token, body: #"{"quietHours":{"start":"22:00","end":"07:00"}}"#)
            try hub.restart()
            #expect(try await hub.request(.GET, "/api/settings", token: hub.token).body.contains(#""quietHours":{"end":"07:00","start":"22:00"}"#))
        }
    }

    @Test func malformedSettingsAreRefused() async throws {
        try await withTemporaryDirectoryAsync { dir in
            let hub = try RunningHub(directory: dir)
            let cases: [(String, String)] = [
                ("", "JSON object"), ("[1]", "JSON object"), ("{}", "nothing to change"), (#"{"volume":3}"#, "unknown setting 'volume'"),
                (#"{"snoozeMinutes":-1}"#, "snoozeMinutes"), (#"{"snoozeMinutes":true}"#, "snoozeMinutes"), (#"{"snoozeMinutes":99999}"#, "snoozeMinutes"),
                (#"{"snoozeUntil":"tomorrow"}"#, "snoozeUntil"), (#"{"quietHours":"night"}"#, "quietHours"),
                (#"{"quietHours":{"start":"25:00","end":"07:00"}}"#, "HH:MM"), (#"{"quietHours":{"start":"07:00","end":"07:00"}}"#, "same time"),
                (String(repeating: " ", count: 5000) + "{}", "larger than"),
            ]
            for (body, message) in cases {
                let reply = try await hub.request(.PUT, "/api/settings", token: hub.token, body: body)
                #expect(reply.status == 400 && reply.body.contains(message), "\(body.prefix(40)) → \(reply.status) \(reply.body)")
            }
            #expect(try await hub.request(.GET, "/api/settings", token: hub.token).body.contains(#""quietHours":null"#))
        }
    }

    /// `monitor --notify` raises a critical notification for an alert, a normal one for a
    /// sound, and none for a quiet sound; `notify-send` here is a stand-in that writes down
    /// its arguments.
    @Test func monitorNotifiesByUrgencyAndKeepsQuiet() async throws {
        try await withTemporaryDirectoryAsync { dir in
            let hub = try RunningHub(directory: dir.appendingPathComponent("hub"))
            let bin = dir.appendingPathComponent("bin"), log = dir.appendingPathComponent("notifications")
            try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
            let script = bin.appendingPathComponent("notify-send")
            // One write per notification, so two at once cannot interleave within a line.
            try "#!/bin/sh\nline=$(printf '%s|' \"$@\")\nprintf '%s\\n' \"$line\" >> '\(log.path)'\n".write(to: script, atomically: true, encoding: .utf8)
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: script.path)
            let monitor = Process()
            monitor.executableURL = URL(fileURLWithPath: earshotPath)
            monitor.arguments = ["monitor", hub.url, "--token", hub.token, "--since", "0", "--notify"]
            monitor.environment = ProcessInfo.processInfo.environment.merging(["PATH": bin.path + ":/usr/bin:/bin"]) { $1 }
            monitor.standardOutput = FileHandle.nullDevice
            monitor.standardError = FileHandle.nullDevice
            try monitor.run()
            defer { if monitor.isRunning { kill(monitor.processIdentifier, SIGKILL) } }
            _ = try await hub.post(#"{"kind":"alert","label":"smoke_alarm","time":1764000000,"source":"kitchen"}"#)
            _ = try await hub.post(#"{"kind":"sound","label":"doorbell","time":1764000001}"#)
            _ = try await hub.request(.PUT, "/api/settings", token: hub.token, body: #"{"snoozeMinutes":5}"#)
            _ = try await hub.post(#"{"kind":"sound","label":"washing_machine","time":1764000002}"#)
            _ = try await hub.post(#"{"kind":"alert","label":"siren","time":1764000003}"#)
            var lines: [String] = []
            for _ in 0..<1000 where lines.count < 3 {
                try await Task.sleep(for: .milliseconds(20))
                lines = ((try? String(contentsOf: log, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
            }
            try await Task.sleep(for: .milliseconds(500))  // time for a notification that should not come
            lines = ((try? String(contentsOf: log, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
            // Each notification is its own notify-send process: they may append in either order.
            #expect(lines.sorted() == [
                "--app-name=Earshot|--urgency=critical|Earshot: smoke alarm|alert at kitchen|",
                "--app-name=Earshot|--urgency=normal|Earshot: doorbell|sound|",
                "--app-name=Earshot|--urgency=critical|Earshot: siren|alert|",
            ].sorted())
        }
    }
}

@Suite(.serialized) struct HubHearingTestTests {
    /// Without a calibration the hub plays no tones, and says how to fix that; the page is
    /// served either way. (The test itself, tones and all, runs in Tests/Live/dashboard.py.)
    @Test func withoutCalibrationThePageSaysWhy() async throws {
        try await withTemporaryDirectoryAsync { dir in
            let hub = try RunningHub(directory: dir)
            let page = try await hub.request(.GET, "/hearing-test")
            #expect(page.status == 200 && page.body.contains("Where did you hear it?"))
            let status = try await hub.request(.GET, "/api/hearing-test", token: hub.token)
            #expect(status.body.contains(#""available":false"#) && status.body.contains("--calibration"))
            let start = try await hub.request(.POST, "/api/hearing-test", token: hub.token, body: #"{"person":"Ada"}"#)
            #expect(start.status == 503 && start.body.contains("--calibration"))
            #expect(try await hub.request(.POST, "/api/hearing-test", body: #"{"person":"Ada"}"#).status == 401)
            #expect(try await hub.request(.POST, "/api/hearing-test/answer", token: hub.token, body: #"{"response":"left"}"#).status == 400)
        }
    }

    @Test func serveRefusesAMissingCalibrationAtStart() throws {
        let result = try earshot("serve", "--port", "0", "--data", NSTemporaryDirectory() + "earshot-none", "--calibration", "/nonexistent/profile.json")
        #expect(result.status != 0 && result.stderr.contains("profile.json") && result.stderr.split(separator: "\n").count == 1)
    }
}
