import EarshotAudiometry
import EarshotCore
import EarshotDSP
import EarshotHub
import EarshotIO
import Foundation

/// Plays hearing-test tones on an output device at calibrated hearing levels, through a guard
/// set at the loudest level any tone of the calibration may reach: nothing plays above it.
struct DeviceTonePlayer: TonePlayer {
    let calibration: Calibration
    let device: AudioDeviceInfo
    private let ceilingDBFS: Double

    static let sampleRate = 48_000.0

    init(calibration: Calibration, device query: String?) throws {
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

    func present(_ tone: Tone?) throws {
        guard let tone else {
            usleep(1_000_000)  // as long as a tone would have lasted
            return
        }
        let level = try calibration.digitalLevel(tone.ear, atHz: tone.frequencyHz, levelDBHL: tone.levelDBHL)
        let channels = try ToneStimulus(frequencyHz: tone.frequencyHz, levelDBFS: level, ear: tone.ear).render(sampleRate: Self.sampleRate)
        let playback = try DevicePlayback(device: device, sampleRate: Self.sampleRate, channelCount: 2)
        try Runner(blockFrames: 512, compensateLatency: false)
            .run(source: MemorySource(channels: channels, sampleRate: Self.sampleRate), chain: OutputLevelGuard(ceilingDBFS: ceilingDBFS), sink: playback)
    }
}
