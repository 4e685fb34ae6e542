import Atomics
import EarshotCore
import EarshotHubClient
import EarshotIO
import EarshotSounds
import Foundation

extension Listening {
    /// A recording heard as fast as it can be read, as if it were the microphone.
    public func hear(file path: String, sessionStart: Date, stop: ManagedAtomic<Bool>) throws {
        let samples = try MatchingAudio(path: path).samples
        for start in stride(from: 0, to: samples.count, by: Self.blockFrames) where !stop.load(ordering: .relaxed) {
            hear(samples[start..<min(samples.count, start + Self.blockFrames)], sessionStart: sessionStart)
        }
        finish()
    }

    /// Captures from the microphone `find` names until stopped; when it goes (unplugged, its sound
    /// server restarted), says so through `note`, waits for it and carries on. With a hub, feeds
    /// its live view. At the first opening a failure is thrown: a wrong device is the user's to fix.
    public func hear(microphone find: () throws -> AudioDeviceInfo, hub: HubAddress?, stop: ManagedAtomic<Bool>) throws {
        let feed = hub.map { LiveFeed(address: $0, sampleRate: Self.sampleRate) }
        defer { feed?.close() }
        let buffer = AudioBuffer(channelCount: 1, capacityFrames: Self.blockFrames)
        var everOpened = false, saidWaiting = false
        while !stop.load(ordering: .relaxed) {
            let capture: DeviceCapture, source: AudioSource
            do {
                if everOpened { try AudioDevices.rescan() }
                (capture, source) = try Self.openMicrophone(try find(), stop: stop)
            } catch let error as EarshotError {
                guard everOpened else { throw error }
                if !saidWaiting { note("waiting for the microphone (\(error))") }
                saidWaiting = true
                for _ in 0..<20 where !stop.load(ordering: .relaxed) { usleep(100_000) }
                continue
            }
            if everOpened { note("the microphone is back") }
            everOpened = true
            saidWaiting = false
            restart()
            let started = Date()
            do {
                while !stop.load(ordering: .relaxed) {
                    var block = buffer.block(frameCount: Self.blockFrames)
                    guard try source.read(into: block) == block.frameCount else { break }
                    feed?.tap.process(&block)
                    hear(ArraySlice(block.channel(0)), sessionStart: started)
                    feed?.pump(alerting: isAlerting)
                }
            } catch let error as EarshotError {
                note("lost the microphone (\(error)); waiting for it")
                saidWaiting = true
            }
            capture.close()
            finish()
        }
    }

    /// The microphone at 16 kHz, or at its own rate resampled when it cannot give 16 kHz itself.
    static func openMicrophone(_ device: AudioDeviceInfo, stop: ManagedAtomic<Bool>) throws -> (DeviceCapture, AudioSource) {
        do {
            let capture = try DeviceCapture(device: device, sampleRate: sampleRate, channelCount: 1, stop: stop, stallSeconds: 3)
            return (capture, capture)
        } catch EarshotError.deviceFailure {
            let capture = try DeviceCapture(device: device, sampleRate: device.defaultSampleRate, channelCount: 1, stop: stop, stallSeconds: 3)
            return (capture, try ResampledSource(capture, sampleRate: sampleRate, inputBlockFrames: Int(device.defaultSampleRate / 10)))
        }
    }
}
