import EarshotCore

/// Passes audio through untouched and copies its first channel into a lock-free ring, for a
/// level meter or spectrum display read on another thread. When the reader falls behind, new
/// samples are dropped rather than waited for: the audio never notices.
public final class LiveTap: AudioProcessor {
    public let ring: RingBuffer

    /// `seconds` of audio at `sampleRate` fit in the ring.
    public init(sampleRate: Double, seconds: Double = 1) {
        ring = RingBuffer(minimumCapacity: max(1, Int(sampleRate * seconds)))
    }

    public func prepare(_ spec: ProcessSpec) throws {}

    public func process(_ block: inout AudioBlock) {
        guard block.channelCount > 0 else { return }
        ring.write(UnsafeBufferPointer(block.channel(0)))
    }

    public func reset() {}

    public var latencySamples: Int { 0 }
}
