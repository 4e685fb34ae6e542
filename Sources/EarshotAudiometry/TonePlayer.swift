import EarshotCore
import EarshotDSP
import EarshotIO
import Foundation

/// Plays the hearing test's tones: on a device, at the hub's page or in a terminal.
public protocol TonePlayer: Sendable {
    /// The calibration that turns hearing levels into output levels.
    var calibration: Calibration { get }
    /// Plays `tone` at its hearing level in its ear (nil: a silent catch trial as long as a
    /// tone) and returns once it has been played out.
    func present(_ tone: Tone?) throws
    /// The test is over: let the output go.
    func close()
}

/// Plays hearing-test tones on an output device at calibrated hearing levels, through a guard
/// set at the loudest level any tone of the calibration may reach: nothing plays above it. The
/// device is opened at the first tone and kept open, playing silence between tones, until
/// `close`: opening a device for every tone fails now and then through some sound servers.
public final class DeviceTonePlayer: TonePlayer, @unchecked Sendable {
    public let calibration: Calibration
    public let device: AudioDeviceInfo
    private let ceilingDBFS: Double
    private let lock = NSLock()
    private var playback: DevicePlayback?

    public static let sampleRate = 48_000.0

    public init(calibration: Calibration, device query: String?) throws {
        let output = try AudioDevices.find(query, direction: .output)
        guard output.outputChannels >= 2 else {
            throw EarshotError.deviceFailure("'\(output.name)' has one channel: a hearing test needs one per ear")
        }
        var ceiling = -120.0
        for ear in Ear.allCases {
            for f in calibration.transducer.frequencies where calibration.profile.fullScale(ear, atHz: f) != nil {
                let maximum = try calibration.maximumDBHL(ear, atHz: f)
                ceiling = max(ceiling, try calibration.digitalLevel(ear, atHz: f, levelDBHL: maximum))
            }
        }
        self.calibration = calibration
        device = output
        ceilingDBFS = min(0, ceiling + 0.5)
    }

    public func present(_ tone: Tone?) throws {
        try lock.withLock {
            let output = try playback ?? DevicePlayback(device: device, sampleRate: Self.sampleRate, channelCount: 2)
            playback = output
            guard let tone else {
                usleep(1_000_000)  // as long as a tone would have lasted
                return
            }
            let level = try calibration.digitalLevel(tone.ear, atHz: tone.frequencyHz, levelDBHL: tone.levelDBHL)
            let channels = try ToneStimulus(frequencyHz: tone.frequencyHz, levelDBFS: level, ear: tone.ear).render(sampleRate: Self.sampleRate)
            do {
                try Runner(blockFrames: 512, compensateLatency: false).run(
                    source: MemorySource(channels: channels, sampleRate: Self.sampleRate), chain: OutputLevelGuard(ceilingDBFS: ceilingDBFS),
                    sink: HeldPlayback(output))
            } catch {
                output.discard()
                playback = nil  // opened afresh for the next tone
                throw error
            }
        }
    }

    public func close() {
        lock.withLock {
            try? playback?.finish()
            playback = nil
        }
    }
}

/// A playback a run writes to and waits for, without closing it.
private final class HeldPlayback: AudioSink {
    let playback: DevicePlayback
    init(_ playback: DevicePlayback) { self.playback = playback }
    func write(_ block: AudioBlock) throws { try playback.write(block) }
    func finish() throws { playback.drain() }
}
