import EarshotCore
import EarshotHub
import EarshotHubClient
import EarshotTestSupport
import Foundation
import Testing

/// A private system bus and Avahi daemon for one test, stopped by their pids; or the machine's
/// own Avahi where one already runs (there can be one per machine).
final class PrivateAvahi {
    private(set) var environment = ProcessInfo.processInfo.environment
    private var pids: [pid_t] = []

    init(directory: URL) throws {
        let check = try runProgram(try #require(installedExecutable("avahi-daemon"), "avahi-daemon is not installed (make live-deps)"), ["--check"])
        if check.status == 0 { return }
        let bus = directory.appendingPathComponent("bus")
        let config = directory.appendingPathComponent("bus.conf")
        try """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN" "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig><type>system</type><listen>unix:path=\(bus.path)</listen><auth>EXTERNAL</auth>
            <policy context="default"><allow user="*"/><allow own="*"/><allow send_type="method_call"/><allow send_destination="*"/><allow receive_sender="*"/></policy>
            </busconfig>
            """.write(to: config, atomically: true, encoding: .utf8)
        // Both daemons fork into the background, so the test's process watcher never waits on them.
        let pidFile = directory.appendingPathComponent("dbus.pid")
        try Self.launch(try #require(installedExecutable("dbus-daemon"), "dbus-daemon is not installed (make live-deps)"),
                        ["--config-file=\(config.path)", "--fork", "--print-pid"], environment: nil, output: pidFile)
        pids.append(try #require(pid_t((try String(contentsOf: pidFile, encoding: .utf8)).trimmingCharacters(in: .whitespacesAndNewlines)),
                                 "dbus-daemon did not start"))
        environment = ProcessInfo.processInfo.environment.merging(["DBUS_SYSTEM_BUS_ADDRESS": "unix:path=\(bus.path)"]) { $1 }
        let avahiConfig = directory.appendingPathComponent("avahi.conf")
        try "[server]\nuse-ipv6=no\n[wide-area]\nenable-wide-area=no\n[publish]\npublish-hinfo=no\npublish-workstation=no\n"
            .write(to: avahiConfig, atomically: true, encoding: .utf8)
        try Self.launch(installedExecutable("avahi-daemon")!, ["-D", "-f", avahiConfig.path, "--no-drop-root", "--no-chroot", "--no-rlimits"],
                        environment: environment, output: nil)
        let avahiPID = (try? String(contentsOfFile: "/run/avahi-daemon/pid", encoding: .utf8)).flatMap { pid_t($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        pids.append(try #require(avahiPID, "avahi-daemon did not start"))
        usleep(1_000_000)  // the daemon registers on the bus and probes its host name
    }

    /// Runs a daemon that forks itself into the background and waits for the parent to return.
    /// Spawned directly, not through Foundation's `Process`, whose exit watcher is inherited by
    /// the forked daemon and would never see the parent end.
    private static func launch(_ executable: String, _ arguments: [String], environment: [String: String]?, output: URL?) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, output?.path ?? "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = (environment ?? ProcessInfo.processInfo.environment).map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid: pid_t = 0
        let status = posix_spawn(&pid, executable, &actions, nil, argv, envp)
        guard status == 0 else { throw EarshotError.internalFailure("cannot start \(executable): error \(status)") }
        var exit: Int32 = 0
        waitpid(pid, &exit, 0)
    }

    deinit {
        for pid in pids.reversed() { kill(pid, SIGKILL) }
    }
}

@Suite(.serialized) struct ServiceDiscoveryTests {
    /// A hub bound beyond loopback announces itself; a monitor given no URL finds it and follows it.
    @Test func monitorFindsTheHubByDNSSD() async throws {
        try await withTemporaryDirectoryAsync { dir in
            let avahi = try PrivateAvahi(directory: dir)
            let hub = try RunningHub(directory: dir.appendingPathComponent("hub"), arguments: ["--host", "0.0.0.0"], environment: avahi.environment)
            let monitor = Process()
            monitor.executableURL = URL(fileURLWithPath: earshotPath)
            monitor.arguments = ["monitor", "--token", hub.token, "--since", "0"]
            monitor.environment = avahi.environment
            let out = Pipe(), err = Pipe()
            monitor.standardOutput = out
            monitor.standardError = err
            try monitor.run()
            defer { if monitor.isRunning { kill(monitor.processIdentifier, SIGKILL) } }
            _ = try await hub.post(#"{"kind":"sound","label":"doorbell","time":1764000000}"#)
            var printed = ""
            for _ in 0..<1200 where !printed.contains("doorbell") {
                printed += String(decoding: out.fileHandleForReading.availableDataIfAny(), as: UTF8.self)
                try await Task.sleep(for: .milliseconds(25))
            }
            kill(monitor.processIdentifier, SIGKILL)
            monitor.waitUntilExit()
            let said = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            #expect(printed.contains(#""label":"doorbell""#), "printed: \(printed); said: \(said)")
            #expect(said.contains("found hub 'Earshot on ") && said.contains(":\(hub.port)"), "\(said)")
        }
    }

    /// Without an Avahi daemon: the monitor says so in one line and stops; the hub says it is
    /// not announced, and serves anyway.
    @Test func withoutAvahiBothSaySo() async throws {
        try await withTemporaryDirectoryAsync { dir in
            let nowhere = ProcessInfo.processInfo.environment.merging(["DBUS_SYSTEM_BUS_ADDRESS": "unix:path=\(dir.path)/no-bus"]) { $1 }
            let monitor = try runProgram(earshotPath, ["monitor", "--token", "0123456789abcdef"], environment: nowhere)
            #expect(monitor.status != 0 && monitor.stderr.contains("no Avahi daemon is running"), "\(monitor.stderr)")
            #expect(monitor.stderr.split(separator: "\n").count == 1)
            let hub = try RunningHub(directory: dir.appendingPathComponent("hub"), arguments: ["--host", "0.0.0.0"], environment: nowhere)
            #expect(try await hub.request(.GET, "/api/health").status == 200)
        }
    }
}
