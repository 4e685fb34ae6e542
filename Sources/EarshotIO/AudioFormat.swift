import CSndFile
import EarshotCore

/// The containers Earshot writes, chosen by file extension.
public enum AudioContainer: String, CaseIterable, Sendable {
    case wav, flac, ogg, aiff, caf

    public init(fileExtension: String) throws {
        switch fileExtension.lowercased() {
        case "wav", "wave": self = .wav
        case "flac": self = .flac
        case "ogg", "oga": self = .ogg
        case "aif", "aiff": self = .aiff
        case "caf": self = .caf
        default:
            throw EarshotError.unsupportedFormat(
                "cannot write '.\(fileExtension)' files; use one of .wav, .flac, .ogg, .aiff, .caf")
        }
    }

    var sndfileFormat: Int32 {
        switch self {
        case .wav: Int32(SF_FORMAT_WAV)
        case .flac: Int32(SF_FORMAT_FLAC)
        case .ogg: Int32(SF_FORMAT_OGG)
        case .aiff: Int32(SF_FORMAT_AIFF)
        case .caf: Int32(SF_FORMAT_CAF)
        }
    }
}

/// How each sample is stored.
public enum SampleFormat: String, CaseIterable, Sendable {
    case s8, u8, s16, s24, s32, f32, f64, vorbis

    init?(sndfileSubtype subtype: Int32) {
        switch subtype {
        case Int32(SF_FORMAT_PCM_S8): self = .s8
        case Int32(SF_FORMAT_PCM_U8): self = .u8
        case Int32(SF_FORMAT_PCM_16): self = .s16
        case Int32(SF_FORMAT_PCM_24): self = .s24
        case Int32(SF_FORMAT_PCM_32): self = .s32
        case Int32(SF_FORMAT_FLOAT): self = .f32
        case Int32(SF_FORMAT_DOUBLE): self = .f64
        case Int32(SF_FORMAT_VORBIS): self = .vorbis
        default: return nil
        }
    }

    var sndfileSubtype: Int32 {
        switch self {
        case .s8: Int32(SF_FORMAT_PCM_S8)
        case .u8: Int32(SF_FORMAT_PCM_U8)
        case .s16: Int32(SF_FORMAT_PCM_16)
        case .s24: Int32(SF_FORMAT_PCM_24)
        case .s32: Int32(SF_FORMAT_PCM_32)
        case .f32: Int32(SF_FORMAT_FLOAT)
        case .f64: Int32(SF_FORMAT_DOUBLE)
        case .vorbis: Int32(SF_FORMAT_VORBIS)
        }
    }

    /// Bits per sample for PCM and float formats; nil for compressed ones.
    public var bitDepth: Int? {
        switch self {
        case .s8, .u8: 8
        case .s16: 16
        case .s24: 24
        case .s32, .f32: 32
        case .f64: 64
        case .vorbis: nil
        }
    }

    /// The natural choice for a container when none is asked for.
    public static func preferred(for container: AudioContainer) -> SampleFormat {
        container == .ogg ? .vorbis : .s16
    }
}

/// A container plus a sample format, checked against what libsndfile can write.
public struct OutputFormat: Equatable, Sendable {
    public var container: AudioContainer
    public var sampleFormat: SampleFormat

    public init(container: AudioContainer, sampleFormat: SampleFormat? = nil) {
        self.container = container
        self.sampleFormat = sampleFormat ?? .preferred(for: container)
    }

    /// Fails with a clear sentence when the pair cannot be written (FLAC has no float samples, …).
    public func validate(sampleRate: Double, channelCount: Int) throws {
        try EarshotError.validate(sampleRate: sampleRate)
        try EarshotError.validate(channelCount: channelCount)
        var info = SF_INFO()
        info.samplerate = Int32(sampleRate)
        info.channels = Int32(channelCount)
        info.format = sndfileFormat
        guard sf_format_check(&info) != 0 else {
            throw EarshotError.unsupportedFormat(
                "\(container.rawValue.uppercased()) cannot hold \(sampleFormat.rawValue) samples"
                    + " at \(Int(sampleRate)) Hz with \(channelCount) channel(s)")
        }
        guard sampleRate == sampleRate.rounded() else {
            throw EarshotError.unsupportedFormat("audio files store whole-number sample rates, not \(sampleRate) Hz")
        }
    }

    var sndfileFormat: Int32 { container.sndfileFormat | sampleFormat.sndfileSubtype }
}
