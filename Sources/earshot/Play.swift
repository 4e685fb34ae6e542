import ArgumentParser
import EarshotCore
import EarshotDSP
import EarshotIO

/// `earshot play FILE`: play a file on an output device, never louder than the ceiling.
struct Play: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Play an audio file on an output device.",
        discussion: "Output passes through a level guard: no sample exceeds --max-output-dbfs.")

    @Argument(help: "Any file libsndfile reads.")
    var file: String

    @OptionGroup var outputDevice: OutputDeviceOption
    @OptionGroup var ceiling: OutputCeilingOption

    func run() throws {
        let reader = try AudioFileReader(path: file)
        let output = try outputDevice.find()
        var source: AudioSource = reader
        var channels = reader.channelCount
        if channels > output.outputChannels {
            channels = output.outputChannels
            source = try ChannelMappedSource(source, channelCount: channels)
        }
        let playback: DevicePlayback
        do {
            playback = try DevicePlayback(device: output, sampleRate: source.sampleRate, channelCount: channels)
        } catch {
            // The device refuses the file's rate: resample to the rate it prefers.
            source = try ResampledSource(source, sampleRate: output.defaultSampleRate)
            playback = try DevicePlayback(device: output, sampleRate: output.defaultSampleRate, channelCount: channels)
        }
        installInterruptHandler()
        let chain = ceiling.guardStage
        let progress = ProgressBar(label: "Playing on \(output.name)", total: reader.info.frameCount)
        try Runner(blockFrames: 1024, compensateLatency: false, stop: interruptRequested, progress: { _ in
            progress.update(reader.framesRead)
        }).run(source: source, chain: chain, sink: playback)
        progress.finish()
        if playback.underrunSamples > 0 {
            Terminal.note("warning: the device ran dry for \(playback.underrunSamples) samples")
        }
    }
}
