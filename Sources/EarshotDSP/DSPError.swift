import EarshotCore

/// What the transforms and convolvers cannot be set up with.
public enum DSPError: EarshotFailure, Equatable {
    case frame(size: Int, hop: Int)
    case synthesisWindowShorterThanHop(hop: Int)
    case windowsOverlapToZero(frame: Int, hop: Int)
    case cannotConvolve(channels: Int, with: Int)
    case partitionSize(Int)
    case emptyResponse
    case responseChannels(response: Int, input: Int)

    public var description: String {
        switch self {
        case .frame(let size, let hop): "STFT needs 1 ≤ hop ≤ frame size and windows of frame size (frame \(size), hop \(hop))"
        case .synthesisWindowShorterThanHop(let hop): "the synthesis window must span at least one hop (\(hop) samples)"
        case .windowsOverlapToZero(let frame, let hop): "windows with frame \(frame) and hop \(hop) overlap to zero somewhere: the signal cannot be reconstructed"
        case .cannotConvolve(let a, let b): "cannot convolve \(a) channels with \(b): use equal counts, or mono on one side"
        case .partitionSize(let size): "partition size must be 1–8192 samples, not \(size)"
        case .emptyResponse: "the response must have at least one sample in every channel"
        case .responseChannels(let response, let input): "a \(response)-channel response cannot process \(input) channel(s)"
        }
    }
}
