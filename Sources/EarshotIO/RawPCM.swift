import EarshotCore
import Foundation

/// Headerless interleaved little-endian PCM, as pipes carry it (`-` on the command line).
public enum RawEncoding: String, CaseIterable, Sendable {
    case s16le, f32le

    public var bytesPerSample: Int { self == .s16le ? 2 : 4 }
}

/// Reads raw PCM from a file descriptor (standard input by default).
public final class RawPCMReader: AudioSource {
    public let sampleRate: Double
    public let channelCount: Int
    public let encoding: RawEncoding
    private let descriptor: Int32
    private var bytes: [UInt8] = []
    private var framesRead = 0
    private var ended = false

    public init(descriptor: Int32 = STDIN_FILENO, encoding: RawEncoding, sampleRate: Double, channelCount: Int) throws {
        try EarshotError.validate(sampleRate: sampleRate)
        try EarshotError.validate(channelCount: channelCount)
        self.descriptor = descriptor
        self.encoding = encoding
        self.sampleRate = sampleRate
        self.channelCount = channelCount
    }

    public func read(into block: AudioBlock) throws -> Int {
        guard !ended else { return 0 }
        let frameBytes = encoding.bytesPerSample * channelCount
        let wanted = block.frameCount * frameBytes
        if bytes.count < wanted { bytes = [UInt8](repeating: 0, count: wanted) }
        // A pipe delivers what it has; keep reading until the block is full or the stream ends.
        var filled = 0
        while filled < wanted {
            let got = bytes.withUnsafeMutableBytes { Foundation.read(descriptor, $0.baseAddress! + filled, wanted - filled) }
            if got < 0 {
                if errno == EINTR { continue }
                throw EarshotError.unreadableAudio(path: "-", reason: String(cString: strerror(errno)))
            }
            if got == 0 { ended = true; break }
            filled += got
        }
        if filled % frameBytes != 0 {
            throw EarshotError.unreadableAudio(
                path: "-", reason: "stream ended inside a frame: is it really \(encoding.rawValue) with \(channelCount) channel(s)?")
        }
        let frames = filled / frameBytes
        try bytes.withUnsafeBytes { raw in
            for frame in 0..<frames {
                for c in 0..<channelCount {
                    let offset = (frame * channelCount + c) * encoding.bytesPerSample
                    let value: Float
                    switch encoding {
                    case .s16le:
                        value = Float(Int16(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: Int16.self))) / 32768
                    case .f32le:
                        value = Float(bitPattern: UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
                        guard value.isFinite else {
                            throw EarshotError.nonFiniteSamples(path: "-", frame: framesRead + frame)
                        }
                    }
                    block.channel(c)[frame] = value
                }
            }
        }
        framesRead += frames
        return frames
    }
}

/// Writes raw PCM to a file descriptor (standard output by default). 16-bit output is
/// rounded and clipped; float output is written as it is.
public final class RawPCMWriter: AudioSink {
    public let encoding: RawEncoding
    private let descriptor: Int32
    private var bytes: [UInt8] = []

    public init(descriptor: Int32 = STDOUT_FILENO, encoding: RawEncoding) {
        self.descriptor = descriptor
        self.encoding = encoding
    }

    public func write(_ block: AudioBlock) throws {
        let channels = block.channelCount, size = encoding.bytesPerSample
        let count = block.frameCount * channels * size
        if bytes.count < count { bytes = [UInt8](repeating: 0, count: count) }
        bytes.withUnsafeMutableBytes { raw in
            for c in 0..<channels {
                let samples = block.channel(c)
                for i in 0..<block.frameCount {
                    let offset = (i * channels + c) * size
                    switch encoding {
                    case .s16le:
                        let scaled = (samples[i] * 32768).rounded()
                        let clipped = Int16(max(-32768, min(32767, scaled.isNaN ? 0 : scaled)))
                        raw.storeBytes(of: clipped.littleEndian, toByteOffset: offset, as: Int16.self)
                    case .f32le:
                        raw.storeBytes(of: samples[i].bitPattern.littleEndian, toByteOffset: offset, as: UInt32.self)
                    }
                }
            }
        }
        var written = 0
        while written < count {
            let n = bytes.withUnsafeBytes { Foundation.write(descriptor, $0.baseAddress! + written, count - written) }
            if n < 0 {
                if errno == EINTR { continue }
                throw EarshotError.writeFailed(path: "-", reason: String(cString: strerror(errno)))
            }
            written += n
        }
    }

    public func finish() throws {}
}
