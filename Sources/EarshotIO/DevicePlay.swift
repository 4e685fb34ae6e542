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
