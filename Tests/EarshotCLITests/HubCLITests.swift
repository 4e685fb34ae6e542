import AsyncHTTPClient
import EarshotHub
import EarshotHubClient
import EarshotTestSupport
import Foundation
import NIOCore
import NIOHTTP1
import Testing

/// `earshot serve` as a separate process, on a free port, with its own data folder.
final class RunningHub: @unchecked Sendable {
    let directory: URL
    private(set) var port = 0
    private(set) var process = Process()
    private(set) var firstOutput = ""
    /// A client per start: after a hub dies, a pool's back-off would delay the next one.
    private(set) var client = HTTPClient(eventLoopGroupProvider: .singleton)

    /// Arguments after `serve --port P --data DIR`, and the environment, for every start.
    let extraArguments: [String]
    let environment: [String: String]?

    init(directory: URL, port: Int = 0, arguments: [String] = [], environment: [String: String]? = nil) throws {
        self.directory = directory
        extraArguments = arguments
        self.environment = environment
        try start(port: port)
    }

    var url: String { "http://127.0.0.1:\(port)" }
    var token: String { (try? String(contentsOf: directory.appendingPathComponent("tokens"), encoding: .utf8))?.split(separator: "\n").first.map(String.init) ?? "" }

    /// Starts it and waits for the line that says where it listens.
    func start(port: Int) throws {
        try? client.syncShutdown()
        client = HTTPClient(eventLoopGroupProvider: .singleton)
        process = Process()
        process.executableURL = URL(fileURLWithPath: earshotPath)
        process.arguments = ["serve", "--port", String(port), "--data", directory.path] + extraArguments
        if let environment { process.environment = environment }
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        var text = ""
        let deadline = Date().addingTimeInterval(20)
        while !text.contains("Earshot hub on http://"), Date() < deadline {
            let data = out.fileHandleForReading.availableData
            if data.isEmpty { usleep(20_000) } else { text += String(decoding: data, as: UTF8.self) }
        }
        if firstOutput.isEmpty { firstOutput = text }
        let match = try #require(text.firstMatch(of: #/http://[0-9.]+:(\d+)/#), "the hub did not start: \(text)")
        self.port = Int(match.output.1)!
    }

    func kill() {
        Foundation.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    func restart() throws {
        kill()
        try start(port: port)
    }

    deinit {
        if process.isRunning { kill() }
        try? client.syncShutdown()
    }

    struct Reply {
        var status: UInt
        var body: String
    }

    func request(_ method: HTTPMethod, _ path: String, token: String? = nil, headers: [(String, String)] = [], body: String? = nil,
                 bytes: [UInt8]? = nil) async throws -> Reply {
        var request = HTTPClientRequest(url: url + path)
        request.method = method
        if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let body { request.body = .bytes(ByteBuffer(string: body)) }
        if let bytes { request.body = .bytes(ByteBuffer(bytes: bytes)) }
        let response = try await client.execute(request, timeout: .seconds(30))
        return Reply(status: response.status.code, body: String(buffer: try await response.body.collect(upTo: 16 << 20)))
    }

    func post(_ json: String) async throws -> Reply {
        try await request(.POST, "/api/events", token: token, body: json)
    }

    func events() async throws -> [StoredEvent] {
        let reply = try await request(.GET, "/api/events?since=0&limit=10000", token: token)
        return try JSONDecoder().decode([StoredEvent].self, from: Data(reply.body.utf8))
    }
}

@Suite(.serialized) struct HubTests {
    @Test func firstRunCreatesATokenAndHealthNeedsNone() async throws {
        try await withTemporaryDirectoryAsync { dir in
            let hub = try RunningHub(directory: dir)
            #expect(hub.firstOutput.contains("token: \(hub.token)") && hub.token.count >= 16)
            let health = try await hub.request(.GET, "/api/health")
            #expect(health.status == 200 && health.body == #"{"status":"ok"}"#)
            let made = try earshot("token", "create", "--data", dir.path)
            let second = made.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(made.status == 0 && second.count >= 16 && second != hub.token)
            // A token made while the hub runs is accepted at once.
            #expect(try await hub.request(.GET, "/api/events", token: second).status == 200)
        }
    }

    /// Tokens are letters and digits only: one beginning with "-" would be read as an option
    /// after `--token`.
    @Test func tokensAreSafeOnACommandLine() throws {
        try withTemporaryDirectory { dir in
            let store = TokenStore(directory: dir.path)
            let made = try (0..<200).map { _ in try store.create() }
            #expect(Set(made).count == 200 && made.allSatisfy { $0.count == 32 })
            #expect(made.allSatisfy { $0.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) } }, "\(made)")
            #expect(try store.all() == made)
        }
    }

    /// Every malformed request is refused with a message, the hub stays up, and nothing of a
    /// refused request is stored.
    @Test func malformedRequestsAreRefusedAndNothingIsStored() async throws {
        try await withTemporaryDirectoryAsync { dir in
            let hub = try RunningHub(directory: dir)
            let good = #"{"kind":"alert","label":"doorbell","time":"2026-11-24T08:00:00Z","confidence":0.9,"source":"hall"}"#
            #expect(try await hub.request(.POST, "/api/events", body: good).status == 401)
            #expect(try await hub.request(.POST, "/api/events", token: "wrong-token-wrong-token", body: good).status == 401)
            #expect(try await hub.request(.GET, "/api/events").status == 401)
            #expect(try await hub.request(.GET, "/api/events/stream").status == 401)
            let refused: [(String, String)] = [
                ("", "empty"), ("{", "not valid JSON"), ("[1,2]", "JSON object"), ("\"text\"", "JSON object"),
                (#"{"label":"doorbell","time":1}"#, "'kind' is missing"),
                (#"{"kind":"alarm","label":"doorbell","time":1}"#, "'kind' must be one of"),
                (#"{"kind":"alert","time":1}"#, "'label' is missing"),
                (#"{"kind":"alert","label":7,"time":1}"#, "'label' must be a string"),
                (#"{"kind":"alert","label":"","time":1}"#, "'label' must be 1–200"),
                (#"{"kind":"alert","label":"doorbell"}"#, "'time' is missing"),
                (#"{"kind":"alert","label":"doorbell","time":"yesterday"}"#, "'time' must be"),
                (#"{"kind":"alert","label":"doorbell","time":true}"#, "'time' must be"),
                (#"{"kind":"alert","label":"doorbell","time":-5}"#, "out of range"),
                (#"{"kind":"alert","label":"doorbell","time":1,"confidence":1.5}"#, "'confidence'"),
                (#"{"kind":"alert","label":"doorbell","time":1,"confidence":"high"}"#, "'confidence'"),
                (#"{"kind":"alert","label":"doorbell","time":1,"source":3}"#, "'source' must be a string"),
                // Control characters: an escaped NUL, an escape code, a DEL.
                (#"{"kind":"alert","label":"door\u0000bell","time":1}"#, "'label' must not hold control characters"),
                (#"{"kind":"alert","label":"doorbell","time":1,"source":"hall\u001b[31m"}"#, "'source' must not hold control characters"),
                (#"{"kind":"alert","label":"doorbell","time":1,"key":"k\u007f"}"#, "'key' must not hold control characters"),
                (#"{"kind":"alert","label":"   ","time":1}"#, "'label' must not be blank"),
                (#"{"kind":"alert","label":"doorbell","time":1,"confidance":0.9}"#, "unknown field 'confidance'"),
                (#"{"kind":"alert","label":""# + String(repeating: "a", count: 20_000) + #"","time":1}"#, "larger than 16384"),
            ]
            for (body, message) in refused {
                let reply = try await hub.post(body)
                #expect(reply.status == 400 && reply.body.contains(message), "\(body.prefix(60)): \(reply.status) \(reply.body)")
            }
            #expect(try await hub.request(.GET, "/api/events?limit=0", token: hub.token).status == 400)
            #expect(try await hub.request(.GET, "/api/events?since=-1", token: hub.token).status == 400)
            #expect(try await hub.request(.GET, "/api/events/stream", token: hub.token, headers: [("Last-Event-ID", "x")]).status == 400)
            #expect(try await hub.events().isEmpty)
            let accepted = try await hub.post(good)
            #expect(accepted.status == 201 && accepted.body == #"{"id":1}"#)
            let stored = try await hub.events()
            #expect(stored == [StoredEvent(id: 1, kind: .alert, label: "doorbell", time: "2026-11-24T08:00:00.000Z", confidence: 0.9, source: "hall")])
            // A retried post with the same key is stored once.
            let keyed = #"{"kind":"test","label":"ping","time":1764000000,"key":"k-1"}"#
            let first = try await hub.post(keyed), again = try await hub.post(keyed)
            #expect(first.status == 201 && again.status == 200 && first.body == again.body)
            #expect(try await hub.events().count == 2)
            #expect(try await hub.request(.GET, "/api/health").status == 200)
        }
    }

    /// 400 posts at once, the hub killed with SIGKILL part-way: every acknowledged event is
    /// there after a restart, none twice.
    @Test func acknowledgedEventsSurviveSIGKILL() async throws {
        try await withTemporaryDirectoryAsync { dir in
            let hub = try RunningHub(directory: dir)
            let acknowledged = Acknowledged()
            try await withThrowingTaskGroup(of: Void.self) { group in
                for n in 0..<400 {
                    group.addTask {
                        let body = #"{"kind":"test","label":"post-\#(n)","time":1764000000}"#
                        guard let reply = try? await hub.post(body), reply.status == 201 else { return }
                        let id = try JSONDecoder().decode([String: Int64].self, from: Data(reply.body.utf8))["id"]!
                        if await acknowledged.add(id: id, label: "post-\(n)") == 100 { hub.kill() }
                    }
                }
                try await group.waitForAll()
            }
            let confirmed = await acknowledged.byID
            #expect(confirmed.count >= 100, "\(confirmed.count) acknowledged before the kill")
            try hub.start(port: hub.port)
            let stored = try await hub.events()
            #expect(Set(stored.map(\.id)).count == stored.count)
            #expect(Set(stored.map(\.label)).count == stored.count, "no event stored twice")
            let storedByID = Dictionary(uniqueKeysWithValues: stored.map { ($0.id, $0.label) })
            for (id, label) in confirmed { #expect(storedByID[id] == label, "acknowledged \(id) \(label) is missing") }
        }
    }

    /// The stream replays exactly what follows Last-Event-ID (or ?since), then goes live.
    @Test func streamReplaysExactlyThenGoesLive() async throws {
        try await withTemporaryDirectoryAsync { dir in
            let hub = try RunningHub(directory: dir)
            for n in 1...10 { _ = try await hub.post(#"{"kind":"sound","label":"e\#(n)","time":1764000000}"#) }
            for (header, query) in [(true, ""), (false, "?since=7")] {
                var request = HTTPClientRequest(url: hub.url + "/api/events/stream" + query)
                request.headers.add(name: "Authorization", value: "Bearer \(hub.token)")
                if header { request.headers.add(name: "Last-Event-ID", value: "6") }
                let response = try await hub.client.execute(request, timeout: .seconds(30))
                #expect(response.headers.first(name: "Content-Type") == "text/event-stream")
                var parser = ServerSentEventParser()
                var ids: [Int64] = []
                var labels: [String] = []
                var posted = false
                for try await chunk in response.body {
                    for message in parser.feed(String(buffer: chunk)) {
                        ids.append(Int64(message.id!)!)
                        labels.append(try JSONDecoder().decode(StoredEvent.self, from: Data(message.data.utf8)).label)
                    }
                    if ids.count == 4 && !posted {
                        posted = true
                        _ = try await hub.post(#"{"kind":"alert","label":"live","time":1764000000}"#)
                    }
                    if ids.count == 5 { break }
                }
                // The second pass starts later and finds the first pass's live event stored.
                #expect(ids == (header ? [7, 8, 9, 10, 11] : [8, 9, 10, 11, 12]))
                #expect(labels == (header ? ["e7", "e8", "e9", "e10", "live"] : ["e8", "e9", "e10", "live", "live"]))
            }
        }
    }

    /// `earshot monitor` across a SIGKILLed and restarted hub: every event printed once, in
    /// order, and each within 1.5 s of its post.
    @Test func monitorMissesNothingAcrossARestart() async throws {
        try await withTemporaryDirectoryAsync { dir in
            let hub = try RunningHub(directory: dir)
            _ = try await hub.post(#"{"kind":"test","label":"before-the-monitor","time":1764000000}"#)
            let monitor = Process()
            monitor.executableURL = URL(fileURLWithPath: earshotPath)
            monitor.arguments = ["monitor", hub.url, "--token", hub.token, "--since", "1"]
            let out = Pipe()
            monitor.standardOutput = out
            let errors = dir.appendingPathComponent("monitor.err")
            FileManager.default.createFile(atPath: errors.path, contents: nil)
            monitor.standardError = try FileHandle(forWritingTo: errors)
            try monitor.run()
            defer { if monitor.isRunning { kill(monitor.processIdentifier, SIGKILL) } }  // the runner blocks SIGTERM in children
            var printed = ""
            func waitFor(_ label: String) -> Double? {
                let start = Date()
                while Date().timeIntervalSince(start) < 5 {
                    printed += String(decoding: out.fileHandleForReading.availableDataIfAny(), as: UTF8.self)
                    if printed.contains("\"\(label)\"") { return Date().timeIntervalSince(start) }
                    usleep(10_000)
                }
                return nil
            }
            _ = try await hub.post(#"{"kind":"test","label":"a0","time":1764000000}"#)
            #expect(waitFor("a0") != nil, "the monitor never connected: \((try? String(contentsOf: errors, encoding: .utf8)) ?? "")")
            for n in 1...3 {
                _ = try await hub.post(#"{"kind":"alert","label":"a\#(n)","time":1764000000}"#)
                let seconds = waitFor("a\(n)")
                #expect(seconds != nil && seconds! < 1.5, "a\(n) after \(String(describing: seconds)) s")
            }
            hub.kill()
            try await Task.sleep(for: .milliseconds(300))
            try hub.start(port: hub.port)
            for n in 4...6 { _ = try await hub.post(#"{"kind":"alert","label":"a\#(n)","time":1764000000}"#) }
            #expect(waitFor("a6") != nil)
            let labels = printed.split(separator: "\n").compactMap { try? JSONDecoder().decode(StoredEvent.self, from: Data($0.utf8)).label }
            #expect(labels == ["a0", "a1", "a2", "a3", "a4", "a5", "a6"])
        }
    }

    /// ntfy's subscribe API: the phone app's poll and its JSON stream.
    @Test func ntfyTopicServesTheEvents() async throws {
        try await withTemporaryDirectoryAsync { dir in
            let hub = try RunningHub(directory: dir)
            _ = try await hub.post(#"{"kind":"alert","label":"smoke_alarm","time":1764000000,"confidence":0.97,"source":"kitchen"}"#)
            _ = try await hub.post(#"{"kind":"sound","label":"doorbell","time":1764000001}"#)
            let poll = try await hub.request(.GET, "/earshot/json?poll=1&since=all", token: hub.token)
            let messages = poll.body.split(separator: "\n").map { try! JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any] }
            #expect(messages.count == 2)
            #expect(messages[0]["event"] as? String == "message" && messages[0]["title"] as? String == "Smoke Alarm")
            #expect(messages[0]["priority"] as? Int == 5 && messages[1]["priority"] as? Int == 3)
            #expect((messages[0]["message"] as? String)?.contains("kitchen") == true)
            #expect(try await hub.request(.GET, "/other/json?poll=1", token: hub.token).status == 404)
            #expect(try await hub.request(.GET, "/earshot/json?poll=1&since=soon", token: hub.token).status == 400)
        }
    }

    /// `detect --hub` while the hub is still down: the alerts wait in the queue and arrive.
    @Test func detectSendsItsAlertsEvenWhenTheHubComesLate() async throws {
        try await withTemporaryDirectoryAsync { dir in
            let hub = try RunningHub(directory: dir.appendingPathComponent("hub"))
            let port = hub.port, token = hub.token
            hub.kill()
            #expect(try earshot("synth", "scene", "--seed", "11", "--duration", "20", "--alerts-per-minute", "9", "--data", "nowhere",
                                "-o", "scene.wav", "--labels", "labels.json", in: dir).status == 0)
            let detect = Process()
            detect.executableURL = URL(fileURLWithPath: earshotPath)
            detect.arguments = ["detect", "scene.wav", "--format", "jsonl", "--hub", "http://127.0.0.1:\(port)", "--token", token]
            detect.currentDirectoryURL = dir
            let out = Pipe()
            detect.standardOutput = out
            detect.standardError = FileHandle.nullDevice
            try detect.run()
            try await Task.sleep(for: .seconds(1.5))
            try hub.start(port: port)
            let printed = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            detect.waitUntilExit()
            #expect(detect.terminationStatus == 0)
            let found = printed.split(separator: "\n").count
            let stored = try await hub.events()
            #expect(found > 0 && stored.count == found, "printed \(found), stored \(stored.count)")
            #expect(stored.allSatisfy { $0.kind == .alert && $0.source != nil })
        }
    }

    /// `serve` prints a link that opens the dashboard signed in; a port in use or a file for a
    /// data folder is one line and exit 2, with nothing created.
    @Test func serveOpensTheFrontDoorOrSaysWhyNot() async throws {
        try await withTemporaryDirectoryAsync { dir in
            let hub = try RunningHub(directory: dir.appendingPathComponent("hub"))
            #expect(hub.firstOutput.contains("Dashboard: http://127.0.0.1:\(hub.port)/#token=\(hub.token)"), "\(hub.firstOutput)")
            let second = dir.appendingPathComponent("second")
            let taken = try earshot("serve", "--port", String(hub.port), "--data", second.path)
            #expect(taken.status == 2 && taken.stderr.contains("port \(hub.port) on 127.0.0.1 is in use"), "\(taken.stderr)")
            #expect(taken.stderr.split(separator: "\n").count == 1)
            #expect(!FileManager.default.fileExists(atPath: second.path), "a folder was made for a hub that never started")
            let file = dir.appendingPathComponent("a-file")
            try Data("x".utf8).write(to: file)
            let notAFolder = try earshot("serve", "--port", "0", "--data", file.path)
            #expect(notAFolder.status == 2 && notAFolder.stderr.contains("is a file, not a folder"), "\(notAFolder.stderr)")
        }
    }

    /// A calibration but no output device: the hub starts, and the hearing-test page says why
    /// it cannot give the test; a broken calibration still stops it.
    @Test func aHubWithoutAnOutputDeviceStartsWithoutTheHearingTest() async throws {
        try await withTemporaryDirectoryAsync { dir in
            let made = try earshot("calibration", "create", "--transducer", "insert", "--name", "lab", "--measured",
                                   "250=100,500=101,1000=102,2000=103,4000=104", "-o", "lab.json", in: dir)
            #expect(made.status == 0, "\(made.stderr)")
            let hub = try RunningHub(directory: dir.appendingPathComponent("hub"),
                                     arguments: ["--calibration", dir.appendingPathComponent("lab.json").path, "--output-device", "no-such-headphones"])
            let status = try await hub.request(.GET, "/api/hearing-test", token: hub.token)
            #expect(status.status == 200 && status.body.contains(#""available":false"#) && status.body.contains("the hearing test is off"), "\(status.body)")
            let start = try await hub.request(.POST, "/api/hearing-test", token: hub.token, body: #"{"person":"Ada"}"#)
            #expect(start.status == 503 && start.body.contains("the hearing test is off"), "\(start.body)")
            let broken = try earshot("serve", "--port", "0", "--data", dir.appendingPathComponent("other").path, "--calibration", "missing.json", in: dir)
            #expect(broken.status == 2 && broken.stderr.contains("missing.json"), "\(broken.stderr)")
        }
    }

    @Test func badHubArgumentsAreOneLine() throws {
        let noToken = try earshot("detect", "x.wav", "--hub", "http://127.0.0.1:1")
        #expect(noToken.status == 2 && noToken.stderr.contains("--hub needs --token"))
        let badURL = try earshot("monitor", "ftp://x", "--token", "t")
        #expect(badURL.status == 2 && badURL.stderr.contains("http://"))
        let port = try earshot("serve", "--port", "70000")
        #expect(port.status == 2 && port.stderr.contains("--port"))
    }
}

/// Acknowledgements gathered from many tasks.
actor Acknowledged {
    private(set) var byID: [Int64: String] = [:]
    func add(id: Int64, label: String) -> Int {
        byID[id] = label
        return byID.count
    }
}

extension FileHandle {
    /// What can be read now without waiting (empty if nothing).
    func availableDataIfAny() -> Data {
        var descriptor = pollfd(fd: fileDescriptor, events: Int16(POLLIN), revents: 0)
        guard poll(&descriptor, 1, 0) > 0 else { return Data() }
        return availableData
    }
}
