import Atomics
import EarshotCore
import Foundation

/// Several input devices recorded over the same seconds, each by a capture stream on a thread of
/// its own, mono at the device's own rate: the microphones of one room compared on one moment.
public final class SimultaneousRecording {
    /// One device's take, or why it failed.
    public struct Take {
        public let device: AudioDeviceInfo
        public let samples: [Float]
        public let failure: Error?
    }

    private let recordings: [DeviceRecording]

    /// Opens every device's stream (throws before anything is recorded when one cannot be).
    public init(_ devices: [AudioDeviceInfo], seconds: Double, stop: ManagedAtomic<Bool>) throws {
        recordings = try devices.map { try DeviceRecording(device: $0, seconds: seconds, stop: stop) }
    }

    /// Records until every device has its seconds or `stop` is set; `cue` runs once, `cueAfter`
    /// seconds in, if recording is still going then (to tell the speaker to begin).
    public func run(cueAfter: Double, cue: () -> Void) -> [Take] {
        let group = DispatchGroup()
        for recording in recordings {
            group.enter()
            Thread.detachNewThread {
                recording.record()
                group.leave()
            }
        }
        if group.wait(timeout: .now() + cueAfter) == .timedOut { cue() }
        group.wait()
        return recordings.map { Take(device: $0.device, samples: $0.sink.channels[0], failure: $0.failure) }
    }

    /// One device's take. Unchecked: the thread that records is the only one to touch it until
    /// the group it signals has been waited for.
    private final class DeviceRecording: @unchecked Sendable {
        let device: AudioDeviceInfo
        let capture: DeviceCapture
        let sink = MemorySink(channelCount: 1)
        let frames: Int
        let stop: ManagedAtomic<Bool>
        var failure: Error?

        init(device: AudioDeviceInfo, seconds: Double, stop: ManagedAtomic<Bool>) throws {
            self.device = device
            self.stop = stop
            capture = try DeviceCapture(device: device, sampleRate: device.defaultSampleRate, channelCount: 1, stop: stop, stallSeconds: 3)
            frames = Int(seconds * device.defaultSampleRate)
        }

        func record() {
            do {
                _ = try Runner(blockFrames: 1024, compensateLatency: false, maximumFrames: frames, stop: stop)
                    .run(source: capture, chain: ProcessorChain(), sink: sink)
            } catch {
                failure = error
            }
            capture.close()
        }
    }
}
