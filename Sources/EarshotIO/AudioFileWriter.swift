import CSndFile
import EarshotCore
import Foundation

/// Writes audio through libsndfile into a hidden temporary file beside the destination and
/// renames it into place on `finish()`. Until then the destination is untouched; a writer
/// dropped without `finish()` removes its temporary file, so a failure never leaves a
/// half-written file behind.
public final class AudioFileWriter: AudioSink {
    public let path: String
    public let format: OutputFormat
    public let sampleRate: Double
    public let channelCount: Int
    public private(set) var framesWritten = 0
    /// Samples beyond full scale that an integer format had to clip (floats store them as they are).
    public private(set) var clippedSamples = 0
    private let clips: Bool
    private let temporaryPath: String
    private var handle: OpaquePointer?
    private var interleaved: [Float] = []

    public init(path: String, format: OutputFormat, sampleRate: Double, channelCount: Int) throws {
        try format.validate(sampleRate: sampleRate, channelCount: channelCount)
        let url = URL(fileURLWithPath: path)
        let directory = url.deletingLastPathComponent().path
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw EarshotError.noFolder(path: path, folder: directory)
        }
        self.path = path
        self.format = format
        self.sampleRate = sampleRate
        self.channelCount = channelCount
        clips = ![.f32, .f64, .vorbis].contains(format.sampleFormat)
        temporaryPath = url.deletingLastPathComponent()
            .appendingPathComponent(".\(url.lastPathComponent).\(ProcessInfo.processInfo.processIdentifier).partial.\(url.pathExtension)")
            .path
        var info = SF_INFO()
        info.samplerate = Int32(sampleRate)
        info.channels = Int32(channelCount)
        info.format = format.sndfileFormat
        guard let handle = sf_open(temporaryPath, Int32(SFM_WRITE), &info) else {
            throw EarshotError.writeFailed(path: path, reason: String(cString: sf_strerror(nil)))
        }
        self.handle = handle
        // Out-of-range floats clip instead of wrapping around when stored as integers.
        sf_command(handle, Int32(SFC_SET_CLIPPING), nil, Int32(SF_TRUE))
        if format.sampleFormat == .vorbis {
            var quality = 0.6
            sf_command(handle, Int32(SFC_SET_VBR_ENCODING_QUALITY), &quality, Int32(MemoryLayout<Double>.size))
        }
    }

    deinit { discard() }

    public func write(_ block: AudioBlock) throws {
        guard let handle else { throw EarshotError.internalFailure("write after the writer was closed") }
        precondition(block.channelCount == channelCount)
        let needed = block.frameCount * channelCount
        if interleaved.count < needed { interleaved = [Float](repeating: 0, count: needed) }
        try interleaved.withUnsafeMutableBufferPointer { out in
            for c in 0..<channelCount {
                let samples = block.channel(c)
                for i in 0..<block.frameCount {
                    guard samples[i].isFinite else {
                        throw EarshotError.nonFiniteSamples(path: path, frame: framesWritten + i)
                    }
                    if clips && abs(samples[i]) > 1 { clippedSamples += 1 }
                    out[i * channelCount + c] = samples[i]
                }
            }
            let written = Int(sf_writef_float(handle, out.baseAddress, sf_count_t(block.frameCount)))
            guard written == block.frameCount else {
                throw EarshotError.writeFailed(path: path, reason: String(cString: sf_strerror(handle)))
            }
        }
        framesWritten += block.frameCount
    }

    /// Completes the file and moves it into place.
    public func finish() throws {
        guard let handle else { throw EarshotError.internalFailure("finish called twice") }
        sf_write_sync(handle)
        let status = sf_close(handle)
        self.handle = nil
        guard status == 0 else {
            unlink(temporaryPath)
            throw EarshotError.writeFailed(path: path, reason: "closing failed with libsndfile error \(status)")
        }
        guard rename(temporaryPath, path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporaryPath)
            throw EarshotError.writeFailed(path: path, reason: reason)
        }
    }

    /// Abandons the file: nothing is left on disk.
    public func discard() {
        guard let handle else { return }
        sf_close(handle)
        self.handle = nil
        unlink(temporaryPath)
    }
}
