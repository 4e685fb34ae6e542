import Atomics
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

/// Where outputs go, checked before anything is read or written.
public enum OutputPath {
    /// Refuses an output that names one of the inputs: the recording would be gone before it was
    /// read through. The same file however named: another spelling of the path, a symbolic link,
    /// a hard link. `-` (standard input or output) is never a file.
    public static func refuseOverwriting(_ output: String?, inputs: [String?]) throws {
        guard let output, output != "-", let target = FileIdentity(output) else { return }
        for case let input? in inputs where input != "-" {
            if FileIdentity(input) == target { throw EarshotError.outputIsInput(output: output, input: input) }
        }
    }

    /// Makes a folder for outputs (and its parents), or says clearly why it cannot.
    public static func makeFolder(_ path: String) throws {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else { throw EarshotError.notAFolder(path: path, reason: "it exists and is not a folder") }
            return
        }
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        } catch {
            throw EarshotError.notAFolder(path: path, reason: "cannot create the folder (\(error.localizedDescription))")
        }
    }

    /// What makes two paths the same file: its device and inode (nil where the file does not exist).
    private struct FileIdentity: Equatable {
        let device: UInt64, inode: UInt64

        init?(_ path: String) {
            var status = stat()
            guard stat(path, &status) == 0 else { return nil }
            device = UInt64(status.st_dev)
            inode = UInt64(status.st_ino)
        }
    }
}

extension AudioFile {
    /// The sample format results that are not confined to ±1 (impulse responses, room
    /// generations) default to: 32-bit float wherever the container holds it, else its best.
    public static func unboundedSampleFormat(for path: String, requested: SampleFormat?) throws -> SampleFormat {
        if let requested { return requested }
        switch try AudioContainer(fileExtension: (path as NSString).pathExtension) {
        case .flac: return .s24
        case .ogg: return .vorbis
        case .wav, .aiff, .caf: return .f32
        }
    }

    /// Writes channels atomically, refusing to clip silently into an integer format.
    public static func writeUnclipped(_ channels: [[Float]], to path: String, sampleRate: Double, sampleFormat: SampleFormat) throws {
        let isFloat = [.f32, .f64].contains(sampleFormat)
        let peak = isFloat ? 0 : channels.reduce(Float(0)) { max($0, $1.reduce(0) { max($0, abs($1)) }) }
        if peak > 1 {
            throw EarshotError.wouldClip(path: path, peakDBFS: 20 * log10(Double(peak)), format: sampleFormat.rawValue)
        }
        try write(AudioBuffer(channels: channels), to: path, sampleRate: sampleRate, sampleFormat: sampleFormat)
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
