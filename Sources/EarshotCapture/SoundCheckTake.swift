import Atomics
import EarshotCore
import EarshotIO

/// A live sound check's take from one microphone: room tone first (the speaker stays quiet),
/// then speech, mono at the device's own rate.
public struct SoundCheckTake {
    public static let roomToneSeconds = 2.0
    /// Dropped at the start: a device's first moments can carry its switch-on thump.
    public static let settleSeconds = 0.3

    public let device: AudioDeviceInfo
    public let samples: [Float]
    public var sampleRate: Double { device.defaultSampleRate }

    public func check() throws -> SoundCheck {
        try SoundCheck(samples, sampleRate: sampleRate, roomToneSeconds: Self.roomToneSeconds)
    }

    /// Records from every device at once. `quiet` runs once the devices are open, so the room tone
    /// is asked for only when it can be heard; `speak` runs when the speech should begin. A device
    /// that fails is thrown where it is the only one, else told to `warn` and left out.
    public static func record(from devices: [AudioDeviceInfo], speechSeconds: Double, stop: ManagedAtomic<Bool>,
                              quiet: () -> Void, speak: () -> Void, warn: (String) -> Void) throws -> [SoundCheckTake] {
        let recording = try SimultaneousRecording(devices, seconds: settleSeconds + roomToneSeconds + speechSeconds, stop: stop)
        quiet()
        return try recording.run(cueAfter: settleSeconds + roomToneSeconds, cue: speak).compactMap { take in
            if let failure = take.failure {
                if devices.count == 1 { throw failure }
                warn("\(take.device.name): \(failure)")
                return nil
            }
            let settle = min(take.samples.count, Int(settleSeconds * take.device.defaultSampleRate))
            return SoundCheckTake(device: take.device, samples: Array(take.samples[settle...]))
        }
    }
}
