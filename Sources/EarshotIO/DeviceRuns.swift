import Atomics
import EarshotCore
import EarshotDSP

extension DevicePlayback {
    /// Plays `source` on `device` through `ceiling` until it ends or `stop` is set: its channels
    /// cut to what the device has, at its own rate or, where the device refuses that, at the
    /// device's. `progress` hears the frames played. Returns the samples the device ran dry for.
    @discardableResult
    public static func play(_ source: AudioSource, on device: AudioDeviceInfo, through ceiling: OutputLevelGuard,
                            stop: ManagedAtomic<Bool>, progress: ((Int) -> Void)? = nil) throws -> Int {
        var source = source
        let channels = min(source.channelCount, device.outputChannels)
        if channels != source.channelCount { source = try ChannelMappedSource(source, channelCount: channels) }
        let playback: DevicePlayback
        do {
            playback = try DevicePlayback(device: device, sampleRate: source.sampleRate, channelCount: channels)
        } catch {
            source = try ResampledSource(source, sampleRate: device.defaultSampleRate)
            playback = try DevicePlayback(device: device, sampleRate: device.defaultSampleRate, channelCount: channels)
        }
        try Runner(blockFrames: 1024, compensateLatency: false, stop: stop, progress: progress).run(source: source, chain: ceiling, sink: playback)
        return playback.underrunSamples
    }
}

extension DeviceCapture {
    /// What a recording got: its length, and what the disk could not keep up with.
    public struct Recorded: Sendable {
        public var seconds: Double
        public var lostSamples: Int
    }

    /// Records `seconds` (or until `stop`) from `device` into `sink`; `progress` hears the frames
    /// recorded so far.
    public static func record(from device: AudioDeviceInfo, sampleRate: Double, channelCount: Int, seconds: Double, into sink: AudioSink,
                              stop: ManagedAtomic<Bool>, progress: ((Int) -> Void)? = nil) throws -> Recorded {
        let capture = try DeviceCapture(device: device, sampleRate: sampleRate, channelCount: channelCount, stop: stop)
        let report = try Runner(blockFrames: 1024, compensateLatency: false, maximumFrames: Int(seconds * sampleRate), stop: stop, progress: progress)
            .run(source: capture, chain: ProcessorChain(), sink: sink)
        capture.close()
        return Recorded(seconds: Double(report.inputFrames) / sampleRate, lostSamples: capture.overflowSamples)
    }
}
