// swift-tools-version:6.0
import PackageDescription

/// A system library found through pkg-config, with the packages that provide it.
func systemLibrary(_ name: String, pkgConfig: String, apt: String, brew: String) -> Target {
    .systemLibrary(name: name, pkgConfig: pkgConfig, providers: [.apt([apt]), .brew([brew])])
}

let package = Package(
    name: "Earshot",
    products: [
        .executable(name: "earshot", targets: ["earshot"]),
        .library(name: "EarshotDSP", targets: ["EarshotDSP"]),
        .library(name: "EarshotIO", targets: ["EarshotIO"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-atomics", from: "1.2.0"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.0.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", from: "2.8.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
    ],
    targets: [
        systemLibrary("CFFTW", pkgConfig: "fftw3f", apt: "libfftw3-dev", brew: "fftw"),
        systemLibrary("CSndFile", pkgConfig: "sndfile", apt: "libsndfile1-dev", brew: "libsndfile"),
        systemLibrary("CSoxr", pkgConfig: "soxr", apt: "libsoxr-dev", brew: "libsoxr"),
        systemLibrary("CPortAudio", pkgConfig: "portaudio-2.0", apt: "portaudio19-dev", brew: "portaudio"),
        systemLibrary("CMosquitto", pkgConfig: "libmosquitto", apt: "libmosquitto-dev", brew: "mosquitto"),
        // DNS-SD through Avahi's Bonjour compatibility library (the system's own on macOS).
        systemLibrary("CDNSSD", pkgConfig: "avahi-compat-libdns_sd", apt: "libavahi-compat-libdnssd-dev", brew: "avahi"),
        systemLibrary("COpenBLAS", pkgConfig: "openblas", apt: "libopenblas-dev", brew: "openblas"),

        .target(name: "CHostAudio", linkerSettings: [.linkedLibrary("asound", .when(platforms: [.linux]))]),

        .target(name: "EarshotCore"),
        .target(name: "EarshotDSP", dependencies: ["EarshotCore", "CFFTW"]),
        .target(
            name: "EarshotIO",
            dependencies: [
                "EarshotCore", "EarshotDSP", "CSndFile", "CSoxr", "CPortAudio", "CHostAudio",
                .product(name: "Atomics", package: "swift-atomics"),
            ]
        ),
        .target(
            name: "EarshotAlerts",
            dependencies: ["EarshotCore", "EarshotDSP", "COpenBLAS", .product(name: "Atomics", package: "swift-atomics")],
            resources: [.copy("Resources/AlertDetector.safetensors")]),
        // Seeded alert sounds, backgrounds and scenes in simulated rooms: training, tests, demos.
        .target(name: "EarshotSynthesis", dependencies: ["EarshotCore", "EarshotDSP", "EarshotIO", "EarshotRoom", "EarshotAlerts", "EarshotHearingAid"]),
        // The hearing-aid path: detector, suppressor with alert separation, output guard.
        .target(name: "EarshotHearingAid", dependencies: ["EarshotCore", "EarshotDSP", "EarshotAlerts", "EarshotEnhance", "EarshotAudiometry"]),
        .target(
            name: "EarshotEnhance", dependencies: ["EarshotCore", "EarshotDSP", "COpenBLAS"],
            resources: [.copy("Resources/Suppressor.safetensors")]),
        .target(name: "EarshotRoom", dependencies: ["EarshotCore", "EarshotDSP"]),
        // Capture modes and the sound check.
        .target(
            name: "EarshotCapture", dependencies: ["EarshotCore", "EarshotDSP", "EarshotIO", "EarshotEnhance", "EarshotAlerts", "EarshotHearingAid"],
            resources: [.copy("Resources/PauseDetector.safetensors"), .copy("Resources/EchoMask.safetensors")]),
        // The user's own sounds (a doorbell, the washing machine): enrollment and matching.
        .target(
            name: "EarshotSounds", dependencies: ["EarshotCore", "EarshotDSP", "EarshotIO", "EarshotAlerts"],
            resources: [.copy("Resources/SoundEmbedding.safetensors")]),
        // The listening daemon's logic: the detectors fed as audio arrives, and the one policy
        // for where events go (cooldown, quiet, hub, Home Assistant).
        .target(name: "EarshotListening", dependencies: ["EarshotCore", "EarshotAlerts", "EarshotSounds", "EarshotHub", "EarshotHubClient", "EarshotHearingAid", "EarshotIO", .product(name: "Atomics", package: "swift-atomics")]),
        // What a producer links to reach a hub or a broker: the event vocabulary, the poster
        // with its spool, the follower, live frames, MQTT for Home Assistant, DNS-SD.
        .target(
            name: "EarshotHubClient",
            dependencies: [
                "EarshotCore", "CMosquitto", "CDNSSD",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
            ]),
        // The hub: events kept in SQLite, served as JSON, Server-Sent Events and ntfy streams,
        // bridged to MQTT; its pages, script and stylesheet as resources.
        .target(
            name: "EarshotHub",
            dependencies: [
                "EarshotCore", "EarshotHubClient", "EarshotAudiometry", "EarshotCapture", .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ],
            resources: [.copy("Resources/web")]),
        .target(
            name: "EarshotAudiometry",
            dependencies: ["EarshotCore", "EarshotDSP", "EarshotIO", .product(name: "GRDB", package: "GRDB.swift")]),
        .executableTarget(
            name: "earshot",
            dependencies: [
                "EarshotCore", "EarshotDSP", "EarshotIO", "EarshotAlerts", "EarshotRoom", "EarshotAudiometry", "EarshotEnhance",
                "EarshotSynthesis", "EarshotHearingAid", "EarshotHub", "EarshotHubClient", "EarshotSounds", "EarshotCapture",
                "EarshotListening", .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Atomics", package: "swift-atomics"),
            ]
        ),

        .target(name: "CAllocationCounter", path: "Benchmarks/AllocationCounter"),
        .executableTarget(
            name: "earshot-bench",
            dependencies: [
                "EarshotCore", "EarshotDSP", "EarshotIO", "EarshotAudiometry", "EarshotEnhance", "EarshotAlerts", "EarshotSynthesis",
                "EarshotHearingAid", "EarshotCapture", "EarshotSounds", "CAllocationCounter", .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ],
            path: "Benchmarks/EarshotBench"),

        .target(name: "EarshotTestSupport", dependencies: ["EarshotCore", "CAllocationCounter"], path: "Tests/EarshotTestSupport"),
        .testTarget(name: "EarshotCoreTests", dependencies: ["EarshotCore"]),
        .testTarget(name: "EarshotDSPTests", dependencies: ["EarshotTestSupport", "EarshotDSP"], resources: [.copy("Fixtures")]),
        .testTarget(name: "EarshotIOTests", dependencies: ["EarshotTestSupport", "EarshotIO", "EarshotDSP"]),
        .testTarget(name: "EarshotAlertsTests", dependencies: ["EarshotTestSupport", "EarshotAlerts", "EarshotIO"], resources: [.copy("Fixtures")]),
        .testTarget(name: "EarshotListeningTests", dependencies: ["EarshotTestSupport", "EarshotListening", "EarshotHub", "EarshotHubClient", "EarshotAlerts"]),
        .testTarget(name: "EarshotSoundsTests", dependencies: ["EarshotTestSupport", "EarshotSounds", "EarshotAlerts"], resources: [.copy("Fixtures")]),
        .testTarget(name: "EarshotRoomTests", dependencies: ["EarshotTestSupport", "EarshotRoom", "EarshotIO"], resources: [.copy("Fixtures")]),
        .testTarget(name: "EarshotAudiometryTests", dependencies: ["EarshotAudiometry"]),
        .testTarget(
            name: "EarshotCaptureTests", dependencies: ["EarshotTestSupport", "EarshotCapture", "EarshotCore", "EarshotDSP"],
            resources: [.copy("Fixtures")]),
        .testTarget(
            name: "EarshotEnhanceTests", dependencies: ["EarshotTestSupport", "EarshotEnhance", "EarshotIO", "EarshotDSP"],
            resources: [.copy("Fixtures")]),
        .testTarget(name: "EarshotSynthesisTests", dependencies: ["EarshotTestSupport", "EarshotSynthesis", "EarshotAlerts", "EarshotDSP"]),
        .testTarget(
            name: "EarshotHearingAidTests", dependencies: ["EarshotTestSupport", "EarshotHearingAid", "EarshotSynthesis", "EarshotAlerts", "EarshotAudiometry"],
            resources: [.copy("Fixtures")]),
        .testTarget(name: "SystemLibraryTests", dependencies: ["COpenBLAS"]),
        .testTarget(
            name: "EarshotCLITests",
            dependencies: [
                "EarshotTestSupport", "earshot", "EarshotIO", "EarshotHub", "EarshotHubClient", "EarshotSounds", .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]),
    ]
)
