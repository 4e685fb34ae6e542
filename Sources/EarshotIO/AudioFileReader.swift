import CSndFile
import EarshotCore
import Foundation

/// What a file holds, read from its header.
public struct AudioFileInfo: Equatable, Sendable {
    public var path: String
    /// The container as libsndfile names it ("WAV (Microsoft)", "FLAC (Free Lossless Audio Codec)", …).
    public var containerName: String
    /// The sample encoding as libsndfile names it ("Signed 16 bit PCM", …).
    public var encodingName: String
    /// The encoding in Earshot's terms, when it is one Earshot can also write.
    public var sampleFormat: SampleFormat?
    public var sampleRate: Double
    public var channelCount: Int
    public var frameCount: Int

    public var durationSeconds: Double { Double(frameCount) / sampleRate }
}

/// Reads any format libsndfile reads, block by block, into planar Float32, with constant
/// memory however long the file. Refuses what cannot be trusted: unreadable, empty,
/// truncated files, absurd rates and channel counts, and NaN or infinite samples.
public final class AudioFileReader: AudioSource {
    public let info: AudioFileInfo
    public var sampleRate: Double { info.sampleRate }
    public var channelCount: Int { info.channelCount }
    private let handle: OpaquePointer
    private var interleaved: [Float] = []
    private(set) public var framesRead = 0

    public init(path: String) throws {
        guard FileManager.default.fileExists(atPath: path) else { throw EarshotError.fileNotFound(path: path) }
        var sfInfo = SF_INFO()
        guard let handle = sf_open(path, Int32(SFM_READ), &sfInfo) else {
            let reason = String(cString: sf_strerror(nil))
            throw EarshotError.unreadableAudio(path: path, reason: reason)
        }
        self.handle = handle
        let formatInfo = Self.formatNames(sfInfo.format)
        info = AudioFileInfo(
            path: path, containerName: formatInfo.container, encodingName: formatInfo.encoding,
            sampleFormat: SampleFormat(sndfileSubtype: sfInfo.format & Int32(SF_FORMAT_SUBMASK)),
            sampleRate: Double(sfInfo.samplerate), channelCount: Int(sfInfo.channels), frameCount: Int(sfInfo.frames))
        do {
            try EarshotError.validate(sampleRate: info.sampleRate)
            try EarshotError.validate(channelCount: info.channelCount)
            guard info.frameCount > 0 else { throw EarshotError.emptyAudio(path: path) }
            try checkNotTruncated()
        } catch {
            sf_close(handle)
            throw error
        }
        // Integer files are scaled to ±1; float files are passed through as stored.
        sf_command(handle, Int32(SFC_SET_NORM_FLOAT), nil, Int32(SF_TRUE))
    }

    deinit { sf_close(handle) }

    /// Reads up to `block.frameCount` frames into `block`; returns how many (0 at the end).
    public func read(into block: AudioBlock) throws -> Int {
        precondition(block.channelCount == info.channelCount)
        let channels = info.channelCount
        if interleaved.count < block.frameCount * channels {
            interleaved = [Float](repeating: 0, count: block.frameCount * channels)
        }
        let got = interleaved.withUnsafeMutableBufferPointer {
            Int(sf_readf_float(handle, $0.baseAddress, sf_count_t(block.frameCount)))
        }
        if got == 0 && framesRead < info.frameCount {
            throw EarshotError.truncatedAudio(path: info.path, expectedFrames: info.frameCount, actualFrames: framesRead)
        }
        try interleaved.withUnsafeBufferPointer { source in
            for frame in 0..<got {
                for c in 0..<channels {
                    let x = source[frame * channels + c]
                    guard x.isFinite else {
                        throw EarshotError.nonFiniteSamples(path: info.path, frame: framesRead + frame)
                    }
                    block.channel(c)[frame] = x
                }
            }
        }
        framesRead += got
        return got
    }

    /// libsndfile quietly shortens a file whose data chunk is cut off; its log keeps the
    /// evidence ("data : 32000 (should be 19956)"). A chunk size of 0 or all ones is the
    /// streaming convention for "unknown length", not damage.
    private func checkNotTruncated() throws {
        var log = [CChar](repeating: 0, count: 4096)
        sf_command(handle, Int32(SFC_GET_LOG_INFO), &log, Int32(log.count))
        let text = String(decoding: log.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        for line in text.split(separator: "\n") {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            guard trimmed.hasPrefix("data") || trimmed.hasPrefix("SSND") else { continue }
            let numbers = trimmed.split(whereSeparator: { !$0.isNumber }).compactMap { Int($0) }
            guard trimmed.contains("should be"), numbers.count >= 2 else { continue }
            let declared = numbers[numbers.count - 2], present = numbers[numbers.count - 1]
            let unknownLength = declared == 0 || declared >= 0x7FFF_FFFF
            if !unknownLength && present < declared {
                let expected = Int((Double(info.frameCount) * Double(declared) / Double(max(present, 1))).rounded())
                throw EarshotError.truncatedAudio(path: info.path, expectedFrames: expected, actualFrames: info.frameCount)
            }
        }
    }

    private static func formatNames(_ format: Int32) -> (container: String, encoding: String) {
        func name(_ value: Int32, _ command: Int32) -> String {
            var formatInfo = SF_FORMAT_INFO()
            formatInfo.format = value
            guard sf_command(nil, command, &formatInfo, Int32(MemoryLayout<SF_FORMAT_INFO>.size)) == 0,
                let cName = formatInfo.name
            else { return "unknown" }
            return String(cString: cName)
        }
        return (
            name(format & Int32(SF_FORMAT_TYPEMASK), Int32(SFC_GET_FORMAT_INFO)),
            name(format & Int32(SF_FORMAT_SUBMASK), Int32(SFC_GET_FORMAT_INFO))
        )
    }
}

/// Whole-file convenience over `AudioFileReader` (for files that fit in memory).
public enum AudioFile {
    public static func read(path: String, blockFrames: Int = 65_536) throws -> (info: AudioFileInfo, buffer: AudioBuffer) {
        let reader = try AudioFileReader(path: path)
        let buffer = AudioBuffer(channelCount: reader.channelCount, capacityFrames: reader.info.frameCount)
        var position = 0
        while position < reader.info.frameCount {
            let count = min(blockFrames, reader.info.frameCount - position)
            let got = try reader.read(into: buffer.block().frames(from: position, count: count))
            if got == 0 { break }
            position += got
        }
        return (reader.info, buffer)
    }

    /// Writes all of `buffer` atomically: the file appears complete or not at all.
    public static func write(_ buffer: AudioBuffer, frameCount: Int? = nil, to path: String, sampleRate: Double, sampleFormat: SampleFormat? = nil) throws {
        let container = try AudioContainer(fileExtension: (path as NSString).pathExtension)
        let writer = try AudioFileWriter(
            path: path, format: OutputFormat(container: container, sampleFormat: sampleFormat),
            sampleRate: sampleRate, channelCount: buffer.channelCount)
        try writer.write(buffer.block(frameCount: frameCount))
        try writer.finish()
    }
}
