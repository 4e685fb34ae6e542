import EarshotAudiometry
import EarshotCore
import EarshotHubClient
import Foundation
import Hummingbird
import HummingbirdWebSocket
import Logging
import NIOCore
import ServiceLifecycle

/// How a hub is set up.
public struct HubConfiguration: Sendable {
    public var host: String
    public var port: Int
    /// The data folder: `hub.sqlite` and `tokens`.
    public var directory: String
    /// The ntfy topic the hub answers to (`/TOPIC/json`, `/TOPIC/sse`).
    public var topic: String
    /// How often an idle stream says it is still there.
    public var heartbeatSeconds: Double
    /// Plays the hearing-test page's tones on this machine; without one the page says why not.
    public var tonePlayer: (any TonePlayer)?
    /// Why there is no tone player, when one was asked for and could not be had (no output
    /// device): the hearing-test page says so instead of the hub not starting.
    public var tonesUnavailable: String?

    public init(host: String = "127.0.0.1", port: Int = 8750, directory: String, topic: String = "earshot", heartbeatSeconds: Double = 15,
                tonePlayer: (any TonePlayer)? = nil) {
        self.host = host
        self.port = port
        self.directory = directory
        self.topic = topic
        self.heartbeatSeconds = heartbeatSeconds
        self.tonePlayer = tonePlayer
    }

    /// Tones for the hearing-test page on `device` (nil: the system's), calibrated by the profile
    /// at `calibrationPath`. A wrong profile is thrown: the hub must not start with it. A missing
    /// output device only turns the hearing test off, and its page says why; that reason is
    /// returned too.
    @discardableResult
    public mutating func playTones(calibrationPath: String, device: String?) throws -> String? {
        let calibration = try Calibration(profile: try CalibrationProfile.load(path: calibrationPath))
        do {
            tonePlayer = try DeviceTonePlayer(calibration: calibration, device: device)
            return nil
        } catch let error as EarshotError where error.isDeviceProblem {
            tonesUnavailable = "the hearing test is off: \(error) (connect headphones and start the hub again)"
            return tonesUnavailable
        }
    }

    /// Whether the hub binds to this machine alone (nothing to announce on the network).
    public var isLoopback: Bool { host == "localhost" || host == "::1" || host.hasPrefix("127.") }

    /// Checks, before anything is created, that the data folder can be one and the address can
    /// be bound: a port in use or a file where the folder should be is one line, not a token and
    /// a folder left behind by a hub that never started.
    public func check() throws {
        var isFolder: ObjCBool = false
        if FileManager.default.fileExists(atPath: directory, isDirectory: &isFolder), !isFolder.boolValue {
            throw HubError.dataFolderIsAFile(directory)
        }
        guard port != 0 else { return }
        var hints = addrinfo(), found: UnsafeMutablePointer<addrinfo>?
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_PASSIVE
        guard getaddrinfo(host, String(port), &hints, &found) == 0, let address = found else {
            throw HubError.notAnAddressHere(host: host)
        }
        defer { freeaddrinfo(found) }
        let socket = Foundation.socket(address.pointee.ai_family, address.pointee.ai_socktype, address.pointee.ai_protocol)
        guard socket >= 0 else { return }  // nothing to learn here: the server will say
        defer { close(socket) }
        var on: Int32 = 1  // as the server binds: a port in TIME_WAIT is free
        setsockopt(socket, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size))
        if bind(socket, address.pointee.ai_addr, address.pointee.ai_addrlen) != 0 {
            throw errno == EADDRINUSE ? HubError.portInUse(port, host: host) : HubError.cannotBind(port, host: host, reason: String(cString: strerror(errno)))
        }
    }
}

/// The hub: stores events durably, serves them as JSON, Server-Sent Events and ntfy streams,
/// the live view and the pages, and (with an MQTT broker) bridges them to Home Assistant.
public struct Hub: Sendable {
    public let configuration: HubConfiguration
    public let database: HubDatabase
    public let store: EventStore
    public let tokens: TokenStore
    public let sounds: SoundStore
    let broadcast = EventBroadcast()
    let live = LiveRelay()
    let hearingTest: HearingTestDesk
    let pages: PagesController

    public init(configuration: HubConfiguration) throws {
        self.configuration = configuration
        database = try HubDatabase(path: (configuration.directory as NSString).appendingPathComponent("hub.sqlite"))
        store = EventStore(database: database)
        sounds = SoundStore(database: database)
        tokens = TokenStore(directory: configuration.directory)
        hearingTest = HearingTestDesk(player: configuration.tonePlayer, resultsPath: Self.resultsPath(directory: configuration.directory),
                                      unavailable: configuration.tonesUnavailable)
        pages = try PagesController()
    }

    /// Hearing tests taken at the hub go where `earshot audiogram` finds them with `--db`.
    public static func resultsPath(directory: String) -> String {
        ResultStore.path(in: directory)
    }

    /// Every event stored from now on, as it is stored (the MQTT bridge follows this).
    public func storedEvents() async -> AsyncStream<StoredEvent> {
        await broadcast.subscribe()
    }

    /// Runs until SIGINT or SIGTERM; `ready` is called once the port is bound.
    public func run(ready: @escaping @Sendable (Int) -> Void = { _ in }) async throws {
        let app = Application(
            router: router(),
            server: .http1WebSocketUpgrade(webSocketRouter: webSocketRouter()),
            configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "earshot"),
            onServerRunning: { channel in ready(channel.localAddress?.port ?? 0) },
            logger: .init(label: "earshot.hub", factory: { _ in SwiftLogNoOpLogHandler() }))
        let live = self.live
        let idleFrames = Task { await live.tick() }
        defer { idleFrames.cancel() }
        try await app.runService()
        await live.closeAll()
    }

    /// The routes: open ones (health, pages), then each resource's controller behind the token.
    func router() -> Router<HubRequestContext> {
        let router = Router(context: HubRequestContext.self)
        router.get("/api/health") { _, _ in Health(status: "ok") }
        pages.addRoutes(to: router)
        LiveController(relay: live).addPlainRoutes(to: router)

        let authenticated = BearerAuthentication<HubRequestContext>(tokens: tokens)
        let stream = EventStream(store: store, broadcast: broadcast, topic: configuration.topic, heartbeatSeconds: configuration.heartbeatSeconds)
        let events = EventsController(store: store, sounds: sounds, broadcast: broadcast, stream: stream)
        let api = router.group("api").add(middleware: authenticated)
        events.addRoutes(to: api.group("events"))
        SettingsController(store: store).addRoutes(to: api.group("settings"))
        SoundsController(sounds: sounds).addRoutes(to: api.group("sounds"))
        HearingTestController(desk: hearingTest).addRoutes(to: api.group("hearing-test"))
        SoundCheckController().addRoutes(to: api.group("soundcheck"))
        events.addTopicRoutes(to: router.group().add(middleware: authenticated))
        return router
    }

    /// `/api/live` upgrades through a router of its own, behind the same token.
    func webSocketRouter() -> Router<BasicWebSocketRequestContext> {
        let router = Router(context: BasicWebSocketRequestContext.self)
        router.add(middleware: BearerAuthentication(tokens: tokens))
        LiveController(relay: live).addRoutes(to: router)
        return router
    }

    struct Health: ResponseEncodable {
        var status: String
    }
}
