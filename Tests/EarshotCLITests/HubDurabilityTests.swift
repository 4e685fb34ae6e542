import EarshotHub
import EarshotTestSupport
import Foundation
import Testing

/// An acknowledged event is on the disk, not only in the page cache: a killed process cannot
/// tell the two apart (the kernel still writes the cache out), so these look at the connection
/// and at the system calls themselves.
@Suite(.serialized) struct HubDurabilityTests {
    /// GRDB sets every write-ahead-log connection to NORMAL in its own set-up; the hub's writer
    /// must run with FULL all the same.
    @Test func theWriterRunsWithSynchronousFull() throws {
        try withTemporaryDirectory { dir in
            let database = try HubDatabase(path: dir.appendingPathComponent("hub.sqlite").path)
            #expect(try database.writerSynchronous() == HubDatabase.full)
            // A second opening of the same file (a `sounds` command beside the hub) is as strict.
            #expect(try HubDatabase(path: database.path).writerSynchronous() == HubDatabase.full)
        }
    }

    /// Ten sequential posts to a hub traced by strace: between reading each request and
    /// writing its 201, an fsync or fdatasync has completed.
    @Test func everyCreatedFollowsAnFsync() async throws {
        let strace = try #require(installedExecutable("strace"), "strace is not installed: make test installs it")
        try await withTemporaryDirectoryAsync { dir in
            let hub = try RunningHub(directory: dir)
            let log = dir.appendingPathComponent("strace.log")
            let tracer = Process()
            tracer.executableURL = URL(fileURLWithPath: strace)
            // Every thread (-f) of the running hub; the socket calls NIO reads and writes with,
            // and the two syncs SQLite may use; enough of each buffer to name the request.
            tracer.arguments = ["-f", "-p", String(hub.process.processIdentifier), "-o", log.path, "-s", "40",
                                "-e", "trace=read,readv,recvfrom,recvmsg,write,writev,sendto,sendmsg,fsync,fdatasync"]
            let attached = Pipe()
            tracer.standardError = attached
            try tracer.run()
            defer {
                hub.kill()
                tracer.waitUntilExit()
            }
            var said = ""
            let deadline = Date().addingTimeInterval(10)
            while !said.contains("attached"), Date() < deadline {
                said += String(decoding: attached.fileHandleForReading.availableDataIfAny(), as: UTF8.self)
                usleep(20_000)
            }
            try #require(said.contains("attached"), "strace could not attach to the hub: \(said)")
            try await Task.sleep(for: .milliseconds(300))
            for n in 1...10 {
                let reply = try await hub.post(#"{"kind":"alert","label":"durable-\#(n)","time":1764000000}"#)
                #expect(reply.status == 201)
            }
            try await Task.sleep(for: .milliseconds(300))
            let lines = try String(contentsOf: log, encoding: .utf8).split(separator: "\n").map(String.init)
            let created = Self.createdWithoutSync(lines)
            #expect(created.answers == 10, "\(created.answers) 201s seen in the trace")
            #expect(created.unsynced.isEmpty, "201s written with no completed fsync since their request was read: \(created.unsynced)")
        }
    }

    /// Reads an strace log in the order it was written: a request is read, syncs complete, a
    /// 201 is written. Returns how many 201s there were and the lines of those that followed
    /// their request's read with no sync completed in between.
    static func createdWithoutSync(_ lines: [String]) -> (answers: Int, unsynced: [String]) {
        var answers = 0, unsynced: [String] = []
        var readRequest = false, synced = false
        for line in lines {
            let syncCall = line.contains("fsync(") || line.contains("fdatasync(") || line.contains("fsync resumed>") || line.contains("fdatasync resumed>")
            if syncCall, !line.contains("<unfinished ...>"), line.hasSuffix(" = 0") {
                // A sync line printed whole, or the end of one, is one that has completed.
                synced = true
            } else if line.contains("POST /api/events") {
                readRequest = true
                synced = false
            } else if line.contains("HTTP/1.1 201") {
                answers += 1
                if !readRequest || !synced { unsynced.append(line) }
                readRequest = false
            }
        }
        return (answers, unsynced)
    }

    @Test func theTraceReaderFindsAMissingSync() {
        let synced = [
            #"12 read(9, "POST /api/events HTTP/1.1\r\nHost: 1"..., 65536) = 180"#,
            #"13 fdatasync(7 <unfinished ...>"#,
            #"12 read(9, 0x7f, 65536) = -1 EAGAIN"#,
            #"13 <... fdatasync resumed>) = 0"#,
            #"12 writev(9, [{iov_base="HTTP/1.1 201 Created\r\nCon"..., iov_len=80}], 1) = 80"#,
        ]
        #expect(Self.createdWithoutSync(synced).answers == 1 && Self.createdWithoutSync(synced).unsynced.isEmpty)
        // The sync still running when the answer goes out does not count.
        let early = [synced[0], synced[1], synced[4], synced[3]]
        #expect(Self.createdWithoutSync(early).unsynced.count == 1)
        // A sync before the request was read does not count either.
        let before = [#"13 fsync(7) = 0"#, synced[0], synced[4]]
        #expect(Self.createdWithoutSync(before).unsynced.count == 1)
    }
}
