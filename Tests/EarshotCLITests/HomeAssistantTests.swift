import EarshotHub
import EarshotHubClient
import EarshotTestSupport
import Foundation
import Testing

/// A real mosquitto broker on loopback, and a subscriber that records everything it sees.
final class Broker: @unchecked Sendable {
    let port: Int
    private var process = Process()
    private let directory: URL
    private let configuration: URL

    init(directory: URL) throws {
        self.directory = directory
        port = try freePort()
        configuration = directory.appendingPathComponent("mosquitto.conf")
        try "listener \(port) 127.0.0.1\nallow_anonymous true\npersistence false\n".write(to: configuration, atomically: true, encoding: .utf8)
        try start()
    }

    private func start() throws {
        let executable = try #require(installedExecutable("mosquitto"), "mosquitto is not installed: make test installs it")
        process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = ["-c", configuration.path]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        for _ in 0..<100 where !canConnect(port) { usleep(50_000) }
    }

    /// Killed and started again on the same port, remembering nothing (no persistence).
    func restart() throws {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        try start()
    }

    // SIGKILL: the test runner's threads block SIGTERM, and children inherit the mask.
    deinit {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    var url: String { "mqtt://127.0.0.1:\(port)" }

    /// `mosquitto_sub -v` on `topics` until stopped; the lines it printed.
    func subscribe(_ topics: [String]) throws -> () -> [(topic: String, payload: String)] {
        let subscriber = Process()
        subscriber.executableURL = URL(fileURLWithPath: try #require(installedExecutable("mosquitto_sub"), "mosquitto_sub is not installed: make test installs it"))
        subscriber.arguments = ["-h", "127.0.0.1", "-p", String(port), "-v", "-q", "1"] + topics.flatMap { ["-t", $0] }
        let output = directory.appendingPathComponent("sub-\(UUID().uuidString).txt")
        FileManager.default.createFile(atPath: output.path, contents: nil)
        subscriber.standardOutput = try FileHandle(forWritingTo: output)
        try subscriber.run()
        usleep(300_000)
        return {
            usleep(300_000)
            kill(subscriber.processIdentifier, SIGKILL)  // it flushes every message as it prints it
            subscriber.waitUntilExit()
            let text = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
            return text.split(separator: "\n").map { line in
                let space = line.firstIndex(of: " ") ?? line.endIndex
                return (String(line[..<space]), space < line.endIndex ? String(line[line.index(after: space)...]) : "")
            }
        }
    }

    func publish(_ topic: String, _ payload: String) throws {
        let publisher = try #require(installedExecutable("mosquitto_pub"), "mosquitto_pub is not installed: make test installs it")
        #expect(try runProgram(publisher, ["-h", "127.0.0.1", "-p", String(port), "-t", topic, "-m", payload]).status == 0)
    }
}

func freePort() throws -> Int {
    let socket = Foundation.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(socket) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, length) } }
    _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socket, $0, &length) } }
    return Int(UInt16(bigEndian: address.sin_port))
}

func canConnect(_ port: Int) -> Bool {
    let socket = Foundation.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(socket) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = UInt16(port).bigEndian
    return withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    } == 0
}

@Suite(.serialized) struct HomeAssistantTests {
    /// `detect --mqtt`: the device announced for discovery (retained), online while it runs and
    /// offline after, and every alert it printed published as JSON.
    @Test func detectAnnouncesTheDeviceAndPublishesItsAlerts() throws {
        try withTemporaryDirectory { dir in
            let broker = try Broker(directory: dir)
            #expect(try earshot("synth", "scene", "--seed", "11", "--duration", "30", "--alerts-per-minute", "8", "--data", "nowhere",
                                "-o", "scene.wav", "--labels", "labels.json", in: dir).status == 0)
            let stop = try broker.subscribe(["homeassistant/#", "earshot/#"])
            let detected = try earshot("detect", "scene.wav", "--format", "jsonl", "--mqtt", broker.url, "--node", "Hall 1", in: dir)
            #expect(detected.status == 0, "\(detected.stderr)")
            let seen = stop()
            let printed = detected.stdout.split(separator: "\n").map { try! JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any] }
            #expect(!printed.isEmpty)

            let config = try #require(seen.first { $0.topic == "homeassistant/device/earshot_hall_1/config" }, "no discovery: \(seen.map(\.topic))")
            let discovery = try #require(try JSONSerialization.jsonObject(with: Data(config.payload.utf8)) as? [String: Any])
            let device = try #require(discovery["dev"] as? [String: Any])
            #expect(device["ids"] as? [String] == ["earshot_hall_1"])
            #expect((discovery["o"] as? [String: Any])?["name"] as? String == "earshot")
            #expect(discovery["avty_t"] as? String == "earshot/hall_1/availability")
            let components = try #require(discovery["cmps"] as? [String: [String: Any]])
            for label in ["siren", "smoke_alarm", "car_horn", "doorbell"] {
                #expect(components[label]?["p"] as? String == "event" && components[label]?["unique_id"] as? String == "earshot_hall_1_\(label)")
            }
            #expect(components["doorbell"]?["dev_cla"] as? String == "doorbell")
            #expect(components["sound"]?["p"] as? String == "binary_sensor" && components["level"]?["p"] as? String == "sensor")
            #expect(components["listening"]?["p"] as? String == "switch" && components["snooze"]?["p"] as? String == "button")
            #expect(Set(components.values.compactMap { $0["unique_id"] as? String }).count == components.count)

            let availability = seen.filter { $0.topic == "earshot/hall_1/availability" }.map(\.payload)
            #expect(availability.first == "online" && availability.last == "offline")
            let events = seen.filter { $0.topic == "earshot/hall_1/event" }.map { try! JSONSerialization.jsonObject(with: Data($0.payload.utf8)) as! [String: Any] }
            #expect(events.map { $0["label"] as? String } == printed.map { $0["class"] as? String })
            #expect(events.allSatisfy { $0["kind"] as? String == "alert" && $0["time"] is String })
            for event in printed {
                let label = event["class"] as! String
                #expect(seen.contains { $0.topic == "earshot/hall_1/event/\(label)" && $0.payload.contains("\"event_type\":\"detected\"") })
            }
        }
    }

    /// Home Assistant restarting (`homeassistant/status` online) gets the discovery again; a
    /// producer that dies without a word is declared offline by its last will.
    @Test func reannouncesAndLeavesALastWill() throws {
        try withTemporaryDirectory { dir in
            let broker = try Broker(directory: dir)
            let bridge = try HomeAssistantBridge(url: broker.url, node: "porch", eventLabels: ["doorbell"], version: "test")
            usleep(300_000)
            let stop = try broker.subscribe(["homeassistant/device/earshot_porch/config"])
            try broker.publish("homeassistant/status", "online")
            let configs = stop()
            #expect(configs.count == 2, "retained on subscribing, then again after Home Assistant came online: \(configs.count)")

            // The listening switch and the snooze button.
            #expect(bridge.isAnnouncing)
            try broker.publish("earshot/porch/listening/set", "OFF")
            usleep(300_000)
            #expect(!bridge.isAnnouncing)
            try broker.publish("earshot/porch/listening/set", "ON")
            try broker.publish("earshot/porch/snooze", "PRESS")
            usleep(300_000)
            #expect(!bridge.isAnnouncing)
            bridge.close()

            #expect(try runProgram(try #require(soxPath), ["-n", "-r", "16000", "-c", "1", dir.appendingPathComponent("long.wav").path, "synth", "900", "pinknoise", "vol", "0.05"]).status == 0)
            let watch = try broker.subscribe(["earshot/garage/availability"])
            let producer = Process()
            producer.executableURL = URL(fileURLWithPath: earshotPath)
            producer.arguments = ["detect", dir.appendingPathComponent("long.wav").path, "--mqtt", broker.url, "--node", "garage"]
            producer.standardOutput = FileHandle.nullDevice
            producer.standardError = FileHandle.nullDevice
            try producer.run()
            usleep(1_500_000)
            kill(producer.processIdentifier, SIGKILL)
            producer.waitUntilExit()
            usleep(2_000_000)  // the broker notices the broken connection
            #expect(watch().map(\.payload) == ["online", "offline"])
        }
    }

    @Test func unreachableBrokerIsOneLine() throws {
        let port = try freePort()
        let result = try earshot("detect", "x.wav", "--mqtt", "mqtt://127.0.0.1:\(port)")
        #expect(result.status != 0 && result.stderr.contains("MQTT broker at 127.0.0.1:\(port)"), "\(result.stderr)")
        let bad = try earshot("detect", "x.wav", "--mqtt", "http://x")
        #expect(bad.status == 2 && bad.stderr.contains("mqtt://"))
    }
}
