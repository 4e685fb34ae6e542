/// What every error Earshot reports is to the person who meets it: one sentence, in the words of
/// the domain (never a command-line flag: the command line adds those), and whether the input was
/// at fault — a file, an argument, a request (exit code 2, HTTP 400) — or Earshot itself (exit
/// code 1). Each domain has its typed error (`AudiometryError`, `RoomError`, …); `EarshotError`
/// holds what every domain shares: files, formats, devices.
public protocol EarshotFailure: Error, CustomStringConvertible, Sendable {
    var isBadInput: Bool { get }
}

extension EarshotFailure {
    public var isBadInput: Bool { true }
}

/// The failures every domain shares. Each case carries enough to write one human sentence;
/// `isBadInput` separates the user's mistakes (exit code 2) from Earshot's own (exit code 1).
public enum EarshotError: EarshotFailure, Equatable {
    case fileNotFound(path: String)
    case unreadableAudio(path: String, reason: String)
    case truncatedAudio(path: String, expectedFrames: Int, actualFrames: Int)
    case emptyAudio(path: String)
    case nonFiniteSamples(path: String, frame: Int)
    case invalidSampleRate(Double)
    case invalidChannelCount(Int)
    case unsupportedChannelMapping(from: Int, to: Int)
    case unsupportedFormat(String)
    case invalidArgument(String)
    case deviceNotFound(String)
    case noDevices(direction: String)
    case deviceFailure(String)
    case writeFailed(path: String, reason: String)
    case internalFailure(String)
    /// A service Earshot needs on this machine or network is not there (a daemon, a hub).
    case serviceUnavailable(String)
    /// A file to be written into a folder that does not exist.
    case noFolder(path: String, folder: String)
    /// A processor that runs at a few rates only (`what`: "the alert detector").
    case rateNotRun(what: String, supportedHz: [Double], rate: Double)
    /// An output that names one of the inputs: writing it would lose the recording.
    case outputIsInput(output: String, input: String)
    /// Raw PCM on standard input, with nothing to say its sample rate.
    case rawRateMissing
    /// Audio louder than full scale, to be written in an integer format that would clip it.
    case wouldClip(path: String, peakDBFS: Double, format: String)
    /// A folder for outputs that cannot be one.
    case notAFolder(path: String, reason: String)
    /// A live run stopped by the person before it had what it needed.
    case interrupted(what: String)

    /// The accepted range of sample rates: from telephone-band oddities to high-resolution audio.
    public static let sampleRateRange: ClosedRange<Double> = 1_000...768_000
    /// The largest channel count Earshot accepts.
    public static let maximumChannelCount = 64

    /// A device that is missing or failing (no sound card, unplugged headphones), rather than
    /// bad input or a broken file.
    public var isDeviceProblem: Bool {
        switch self {
        case .deviceNotFound, .noDevices, .deviceFailure: true
        default: false
        }
    }

    public var isBadInput: Bool {
        switch self {
        case .internalFailure, .writeFailed, .serviceUnavailable: false
        default: true
        }
    }

    public var description: String {
        switch self {
        case .fileNotFound(let path):
            "\(path): no such file"
        case .unreadableAudio(let path, let reason):
            "\(path): not a readable audio file (\(reason))"
        case .truncatedAudio(let path, let expected, let actual):
            "\(path): file is truncated: header promises \(expected) frames but only \(actual) are present"
        case .emptyAudio(let path):
            "\(path): contains no audio frames"
        case .nonFiniteSamples(let path, let frame):
            "\(path): contains NaN or infinite samples (first at frame \(frame))"
        case .invalidSampleRate(let rate):
            "sample rate \(Self.format(rate)) Hz is outside the supported range "
                + "\(Self.format(Self.sampleRateRange.lowerBound))–\(Self.format(Self.sampleRateRange.upperBound)) Hz"
        case .invalidChannelCount(let count):
            "channel count \(count) is outside the supported range 1–\(Self.maximumChannelCount)"
        case .unsupportedChannelMapping(let from, let to):
            "cannot map \(from) channels to \(to): only mono to many, many to mono and equal counts are supported"
        case .unsupportedFormat(let detail):
            "unsupported format: \(detail)"
        case .invalidArgument(let detail):
            detail
        case .noFolder(let path, let folder):
            "\(path): directory \(folder) does not exist"
        case .rateNotRun(let what, let supported, let rate):
            "\(what) runs at \(supported.map { Self.format($0 / 1000) }.joined(separator: " or ")) kHz, not \(Int(rate)) Hz: resample first"
        case .deviceNotFound(let name):
            "no audio device matches '\(name)' (run 'earshot devices' to list them)"
        case .noDevices(let direction):
            "no audio \(direction) devices are available on this machine"
        case .deviceFailure(let detail):
            "audio device error: \(detail)"
        case .writeFailed(let path, let reason):
            "\(path): cannot write (\(reason))"
        case .internalFailure(let detail):
            "internal error: \(detail)"
        case .serviceUnavailable(let detail):
            detail
        case .outputIsInput(let output, let input):
            "the output \(output) is the input \(input): write to another file, or the recording is lost"
        case .rawRateMissing:
            "reading raw PCM from stdin needs its sample rate"
        case .wouldClip(let path, let peak, let format):
            "\(path): the audio peaks at \(peak >= 0 ? "+" : "")\((peak * 10).rounded() / 10) dBFS and \(format) would clip it; use a float format or normalise"
        case .notAFolder(let path, let reason):
            "\(path): \(reason)"
        case .interrupted(let what):
            "\(what) was interrupted"
        }
    }

    /// Checks a sample rate against `sampleRateRange`.
    public static func validate(sampleRate: Double) throws {
        guard sampleRate.isFinite, sampleRateRange.contains(sampleRate) else {
            throw EarshotError.invalidSampleRate(sampleRate)
        }
    }

    /// Checks a channel count against `1...maximumChannelCount`.
    public static func validate(channelCount: Int) throws {
        guard (1...maximumChannelCount).contains(channelCount) else {
            throw EarshotError.invalidChannelCount(channelCount)
        }
    }

    private static func format(_ value: Double) -> String {
        value.isFinite && value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
    }
}
