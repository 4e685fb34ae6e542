import AsyncHTTPClient
import Foundation
import NIOCore

/// The hub under load on loopback: `earshot serve` (the binary beside this one) takes `total`
/// posts from `concurrency` clients at once; every post waits for its fsync, as in use.
func hubLoadReport(total: Int = 2_000, concurrency: Int = 32) async throws {
    let earshot = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("earshot").path
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("earshot-bench-hub-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: directory) }
    let server = Process()
    server.executableURL = URL(fileURLWithPath: earshot)
    server.arguments = ["serve", "--port", "0", "--data", directory.path]
    let out = Pipe()
    server.standardOutput = out
    server.standardError = FileHandle.nullDevice
    try server.run()
    defer {
        kill(server.processIdentifier, SIGKILL)
        server.waitUntilExit()
    }
    var text = ""
    while !text.contains("Earshot hub on http://") {
        let data = out.fileHandleForReading.availableData
        guard !data.isEmpty else { throw CocoaError(.fileReadUnknown) }
        text += String(decoding: data, as: UTF8.self)
    }
    let port = text.firstMatch(of: #/127\.0\.0\.1:(\d+)/#).map { String($0.output.1) } ?? "0"
    let token = text.firstMatch(of: #/token: (\S+)/#).map { String($0.output.1) } ?? ""

    var configuration = HTTPClient.Configuration()
    configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = concurrency
    let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    let started = Date()
    let latencies = try await withThrowingTaskGroup(of: [Double].self) { group in
        for worker in 0..<concurrency {
            group.addTask {
                var seconds: [Double] = []
                for n in stride(from: worker, to: total, by: concurrency) {
                    var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/api/events")
                    request.method = .POST
                    request.headers.add(name: "Authorization", value: "Bearer \(token)")
                    request.body = .bytes(ByteBuffer(string: #"{"kind":"test","label":"load-\#(n)","time":1764000000,"confidence":0.5}"#))
                    let start = Date()
                    let response = try await client.execute(request, timeout: .seconds(30))
                    _ = try await response.body.collect(upTo: 1024)
                    guard response.status.code == 201 else { throw CocoaError(.fileWriteUnknown) }
                    seconds.append(Date().timeIntervalSince(start))
                }
                return seconds
            }
        }
        return try await group.reduce(into: []) { $0 += $1 }.sorted()
    }
    let elapsed = Date().timeIntervalSince(started)
    try await client.shutdown()
    func percentile(_ p: Double) -> Double { latencies[min(latencies.count - 1, Int(p * Double(latencies.count)))] * 1000 }
    print("\nHub under load on loopback: \(total) posts from \(concurrency) clients, each acknowledged only once on disk")
    print(String(format: "  %.0f events/s; latency p50 %.1f ms, p99 %.1f ms, max %.1f ms", Double(total) / elapsed, percentile(0.5),
                 percentile(0.99), latencies.last! * 1000))
}
