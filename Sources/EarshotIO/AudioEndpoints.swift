import EarshotCore
import Foundation

/// Opens any input or output path: a file, or `-` for raw PCM on standard input or output,
/// described by the raw settings.
public struct AudioEndpoints: Sendable {
    public var rawRate: Double?
    public var rawChannels: Int
    public var rawEncoding: RawEncoding

    public init(rawRate: Double? = nil, rawChannels: Int = 1, rawEncoding: RawEncoding = .s16le) {
        self.rawRate = rawRate
        self.rawChannels = rawChannels
        self.rawEncoding = rawEncoding
    }

    public func openSource(_ path: String) throws -> AudioSource {
        guard path == "-" else { return try AudioFileReader(path: path) }
        guard let rawRate else { throw EarshotError.rawRateMissing }
        return try RawPCMReader(encoding: rawEncoding, sampleRate: rawRate, channelCount: rawChannels)
    }

    /// A file in the format its extension names, in `sampleFormat`, else the input's where the
    /// container holds it, else the container's own.
    public func openSink(
        _ path: String, sampleRate: Double, channelCount: Int,
        sampleFormat: SampleFormat?, inputSampleFormat: SampleFormat? = nil
    ) throws -> AudioSink {
        guard path != "-" else { return RawPCMWriter(encoding: rawEncoding) }
        let container = try AudioContainer(fileExtension: (path as NSString).pathExtension)
        var format = OutputFormat(container: container, sampleFormat: sampleFormat ?? inputSampleFormat)
        if sampleFormat == nil, (try? format.validate(sampleRate: sampleRate, channelCount: channelCount)) == nil {
            format = OutputFormat(container: container)  // the input's encoding does not fit this container
        }
        return try AudioFileWriter(path: path, format: format, sampleRate: sampleRate, channelCount: channelCount)
    }
}

extension AudioEndpoints {
    /// Copies `input` to `output`: channels mapped and the rate changed where asked, in
    /// `sampleFormat`, else the input's where the container holds it. `progress` hears the input
    /// frames read and how many there are (0 for a stream). Returns the sink written.
    @discardableResult
    public func convert(_ input: String, to output: String, rate: Double?, channels: Int?, sampleFormat: SampleFormat?,
                        progress: @escaping (_ done: Int, _ total: Int) -> Void = { _, _ in }) throws -> AudioSink {
        let source = try openSource(input)
        var converted: AudioSource = source
        if let channels, channels != converted.channelCount { converted = try ChannelMappedSource(converted, channelCount: channels) }
        if let rate {
            try EarshotError.validate(sampleRate: rate)
            if rate != converted.sampleRate { converted = try ResampledSource(converted, sampleRate: rate) }
        }
        let reader = source as? AudioFileReader
        let sink = try openSink(output, sampleRate: converted.sampleRate, channelCount: converted.channelCount,
                                sampleFormat: sampleFormat, inputSampleFormat: reader?.info.sampleFormat)
        try Runner(blockFrames: 4096, progress: { _ in
            if let reader { progress(reader.framesRead, reader.info.frameCount) }
        }).run(source: converted, chain: ProcessorChain(), sink: sink)
        return sink
    }
}
