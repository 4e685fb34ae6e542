/// What the loudspeaker played, sample for sample beside the microphone, when the far end is
/// handed to it block by block in step with the capture.
///
/// When the loudspeaker asks for more than it has been handed (it takes its buffer's worth at a
/// time, and the capture may come late), it plays silence, and everything after is played that
/// much later. That silence goes into the reference too, at the same place (the loudspeaker had
/// played all it was handed), so the echo path an echo canceller models keeps its delay instead
/// of jumping by the gap. Through PulseAudio, at the host's safe output latency, 8 of 8 live
/// starts failed to cancel without this (jumps of 1–15 ms), and 3 of 45 with it.
public struct PlayedFarEnd {
    public let far: [Float]
    /// How far the far end has been handed to the loudspeaker, and how far into the reference.
    public private(set) var position = 0
    private var referencePosition = 0
    /// Silence the loudspeaker played that the reference has still to carry.
    private var gapLeft = 0
    /// The loudspeaker's silence counted so far; what it played before it was handed anything
    /// is no gap.
    private var silenceSeen: Int?

    public init(far: [Float]) { self.far = far }

    /// The next `played.count` samples to hand the loudspeaker, and beside them the reference for
    /// as many microphone samples. `silencePlayed`: all the silence the loudspeaker has played
    /// for want of samples so far, read just before this block is handed over.
    public mutating func next(played: UnsafeMutableBufferPointer<Float>, reference: UnsafeMutableBufferPointer<Float>, silencePlayed: Int) {
        gapLeft += silencePlayed - (silenceSeen ?? silencePlayed)
        silenceSeen = silencePlayed
        for i in 0..<min(played.count, reference.count) {
            played[i] = position < far.count ? far[position] : 0
            position += 1
            if gapLeft > 0 {
                reference[i] = 0
                gapLeft -= 1
            } else {
                reference[i] = referencePosition < far.count ? far[referencePosition] : 0
                referencePosition += 1
            }
        }
    }
}
