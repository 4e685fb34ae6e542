/// What the loudspeaker played, sample for sample beside the microphone, when the far end is
/// handed to it block by block in step with the capture.
///
/// When the loudspeaker asks for more than it has been handed (it takes its buffer's worth at a
/// time, and the capture may come late), it plays silence, and everything after is played that
/// much later. That silence goes into the reference too, at the same place in the far end —
/// after the last sample handed over before it, which the loudspeaker had played — so the echo
/// path an echo canceller models keeps its delay instead of jumping by the gap. Through
/// PulseAudio, at the host's safe output latency, 8 of 8 live starts failed to cancel without
/// this (jumps of 1–15 ms). The reference runs behind what is handed over by the silence played
/// so far, so a gap is put in only when the reference reaches its place: put in at once, each
/// gap landed as many samples early as all the gaps before it, and the canceller met a stretch
/// of far end that did not match the echo at every gap (a few in each start).
public struct PlayedFarEnd {
    public let far: [Float]
    /// How far the far end has been handed to the loudspeaker, and how far into the reference.
    public private(set) var position = 0
    private var referencePosition = 0
    /// Gaps the reference has still to carry, oldest first, as a ring: where in the far end each
    /// falls (the samples handed over before it) and how long it is.
    private var gapAt: [Int], gapLength: [Int]
    private var firstGap = 0, gapCount = 0
    /// The loudspeaker's silence counted so far; what it played before it was handed anything
    /// is no gap.
    private var silenceSeen: Int?
    static let gapCapacity = 64

    public init(far: [Float]) {
        self.far = far
        gapAt = [Int](repeating: 0, count: Self.gapCapacity)
        gapLength = [Int](repeating: 0, count: Self.gapCapacity)
    }

    /// The next `played.count` samples to hand the loudspeaker, and beside them the reference for
    /// as many microphone samples. `silencePlayed`: all the silence the loudspeaker has played
    /// for want of samples so far, read just before this block is handed over.
    public mutating func next(played: UnsafeMutableBufferPointer<Float>, reference: UnsafeMutableBufferPointer<Float>, silencePlayed: Int) {
        let gap = silencePlayed - (silenceSeen ?? silencePlayed)
        silenceSeen = silencePlayed
        if gap > 0 { addGap(at: position, length: gap) }
        for i in 0..<min(played.count, reference.count) {
            played[i] = position < far.count ? far[position] : 0
            position += 1
            if gapCount > 0, gapAt[firstGap] <= referencePosition {
                reference[i] = 0
                gapLength[firstGap] -= 1
                if gapLength[firstGap] == 0 {
                    firstGap = (firstGap + 1) % Self.gapCapacity
                    gapCount -= 1
                }
            } else {
                reference[i] = referencePosition < far.count ? far[referencePosition] : 0
                referencePosition += 1
            }
        }
    }

    /// Gaps come in the far end's order; one at the place of the last (nothing handed over
    /// between) or beyond the ring's capacity lengthens the last.
    private mutating func addGap(at place: Int, length: Int) {
        let last = (firstGap + gapCount - 1 + Self.gapCapacity) % Self.gapCapacity
        if gapCount > 0, gapAt[last] == place || gapCount == Self.gapCapacity {
            gapLength[last] += length
        } else {
            let slot = (firstGap + gapCount) % Self.gapCapacity
            gapAt[slot] = place
            gapLength[slot] = length
            gapCount += 1
        }
    }
}
