import EarshotHub
import EarshotTestSupport
import Foundation
import Testing

/// `mosquitto_sub -v` on some topics, read while it runs.
final class Subscription: @unchecked Sendable {
    private let process = Process()
    private let output: URL

    init(port: Int, topics: [String], directory: URL) throws {
        process.executableURL = URL(fileURLWithPath: try #require(installedExecutable("mosquitto_sub"), "mosquitto_sub is not installed: make test installs it"))
        process.arguments = ["-h", "127.0.0.1", "-p", String(port), "-v", "-q", "1"] + topics.flatMap { ["-t", $0] }
        output = directory.appendingPathComponent("sub-\(UUID().uuidString).txt")
        FileManager.default.createFile(atPath: output.path, contents: nil)
        process.standardOutput = try FileHandle(forWritingTo: output)
        try process.run()
        usleep(300_000)
    }

    deinit {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// Every message so far (mosquitto_sub flushes each as it prints it).
    var seen: [(topic: String, payload: String)] {
        let text = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").map { line -> (topic: String, payload: String) in
            let parts = line.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: false)
            return (String(parts[0]), parts.count > 1 ? String(parts[1]) : "")
        }
    }

    /// The first message on `topic` whose payload passes `test`, waiting up to `seconds`.
    func wait(for topic: String, seconds: Double = 5, where test: (String) -> Bool = { _ in true }) -> String? {
        let deadline = Date().addingTimeInterval(seconds)
        repeat {
            if let found = seen.first(where: { $0.topic == topic && test($0.payload) }) { return found.payload }
            usleep(50_000)
        } while Date() < deadline
        return nil
    }
}

/// `earshot serve --mqtt`: the hub is the one Home Assistant device every event reaches,
/// whichever producer posted it.
@Suite(.serialized) struct HubMQTTTests {
    static func object(_ payload: String?) -> [String: Any]? {
        payload.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    @Test func serveBridgesEveryStoredEvent() async throws {
        try await withTemporaryDirectoryAsync { dir in
            let broker = try Broker(directory: dir)
            let sounds = try SoundStore(path: dir.appendingPathComponent("hub.sqlite").path)
            try sounds.enroll("front_door", clips: [.init(role: .enrollment, source: "test", samples: [Float](repeating: 0.1, count: 16_000))])
            let watching = try Subscription(port: broker.port, topics: ["homeassistant/#", "earshot/#"], directory: dir)
            let hub = try RunningHub(directory: dir, arguments: ["--mqtt", broker.url, "--node", "Hub 1"])
            #expect(hub.firstOutput.contains("Home Assistant: device earshot_hub_1"), "\(hub.firstOutput)")

            // One device: an event entity per alert class and per enrolled sound, the sound
            // sensor, the level, the listening switch and the snooze button; online.
            let config = try #require(Self.object(watching.wait(for: "homeassistant/device/earshot_hub_1/config")), "no discovery: \(watching.seen.map(\.topic))")
            #expect((config["dev"] as? [String: Any])?["ids"] as? [String] == ["earshot_hub_1"])
            #expect(config["avty_t"] as? String == "earshot/hub_1/availability")
            let components = try #require(config["cmps"] as? [String: [String: Any]])
            for label in ["siren", "smoke_alarm", "car_horn", "doorbell", "front_door"] { #expect(components[label]?["p"] as? String == "event", "\(label)") }
            #expect(components["sound"]?["p"] as? String == "binary_sensor" && components["level"]?["p"] as? String == "sensor")
            #expect(components["listening"]?["p"] as? String == "switch" && components["snooze"]?["p"] as? String == "button")
            #expect(watching.wait(for: "earshot/hub_1/availability") == "online")

            // Events posted over HTTP by another process (this one) reach the broker.
            #expect(try await hub.post(#"{"kind":"alert","label":"smoke_alarm","time":1764000000,"confidence":0.93,"source":"kitchen-pi"}"#).status == 201)
            #expect(try await hub.post(#"{"kind":"sound","label":"front_door","time":1764000001,"source":"hall-pi"}"#).status == 201)
            let alert = Self.object(watching.wait(for: "earshot/hub_1/event") { $0.contains("smoke_alarm") })
            #expect(alert?["kind"] as? String == "alert" && alert?["source"] as? String == "kitchen-pi" && alert?["confidence"] as? Double == 0.93)
            #expect(watching.wait(for: "earshot/hub_1/event/smoke_alarm") { $0.contains("detected") } != nil)
            #expect(watching.wait(for: "earshot/hub_1/event/front_door") { $0.contains("detected") } != nil)
            #expect(watching.wait(for: "earshot/hub_1/sound") { $0 == "ON" } != nil, "the sound sensor follows the alert")

            // The snooze button snoozes the hub: a sound is then quiet and goes no further; an
            // alert still does.
            try broker.publish("earshot/hub_1/snooze", "PRESS")
            var snoozed = false
            for _ in 0..<50 where !snoozed {
                snoozed = try await !hub.request(.GET, "/api/settings", token: hub.token).body.contains(#""snoozeUntil":null"#)
                if !snoozed { try await Task.sleep(for: .milliseconds(100)) }
            }
            #expect(snoozed, "the snooze button did not reach the hub's settings")
            _ = try await hub.post(#"{"kind":"sound","label":"front_door","time":1764000002,"key":"while-snoozed"}"#)
            _ = try await hub.post(#"{"kind":"alert","label":"siren","time":1764000003}"#)
            #expect(watching.wait(for: "earshot/hub_1/event/siren") != nil)
            #expect(watching.seen.filter { $0.topic == "earshot/hub_1/event/front_door" }.count == 1, "a quiet event was published")

            // A sound enrolled while the hub runs becomes an entity of its own.
            try sounds.enroll("back_door", clips: [.init(role: .enrollment, source: "test", samples: [Float](repeating: 0.1, count: 16_000))])
            let again = Self.object(watching.wait(for: "homeassistant/device/earshot_hub_1/config") { $0.contains("back_door") })
            #expect((again?["cmps"] as? [String: Any])?["back_door"] != nil)

            // Home Assistant coming back online is answered with the discovery again.
            let configs = watching.seen.filter { $0.topic == "homeassistant/device/earshot_hub_1/config" }.count
            try broker.publish("homeassistant/status", "online")
            try await Task.sleep(for: .milliseconds(500))
            #expect(watching.seen.filter { $0.topic == "homeassistant/device/earshot_hub_1/config" }.count > configs)

            // The broker restarts, remembering nothing: the hub connects again, announces
            // itself, and the next event gets through.
            try broker.restart()
            let after = try Subscription(port: broker.port, topics: ["homeassistant/#", "earshot/#"], directory: dir)
            #expect(after.wait(for: "homeassistant/device/earshot_hub_1/config", seconds: 15) != nil, "no discovery after the broker restarted")
            #expect(after.wait(for: "earshot/hub_1/availability") == "online")
            _ = try await hub.post(#"{"kind":"alert","label":"car_horn","time":1764000004}"#)
            #expect(after.wait(for: "earshot/hub_1/event/car_horn") != nil)

            // Killed without a word: the broker publishes the last will.
            hub.kill()
            #expect(after.wait(for: "earshot/hub_1/availability") { $0 == "offline" } != nil, "no last will")
        }
    }

    @Test func unreachableBrokerStopsTheHubInOneLine() throws {
        try withTemporaryDirectory { dir in
            let port = try freePort()
            let result = try earshot("serve", "--port", "0", "--data", dir.path, "--mqtt", "mqtt://127.0.0.1:\(port)")
            #expect(result.status != 0 && result.stderr.contains("MQTT broker at 127.0.0.1:\(port)"), "\(result.stderr)")
            let bad = try earshot("serve", "--data", dir.path, "--mqtt", "http://x")
            #expect(bad.status == 2 && bad.stderr.contains("mqtt://"))
        }
    }
}
