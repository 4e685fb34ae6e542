/// A planar view of audio: `channelCount` channels of `frameCount` Float32 samples, channel
/// `c` starting at `base + c * channelStride`. A block keeps the storage it views alive
/// (`owner`), and creating or slicing one never allocates, so blocks move freely on the
/// real-time path.
public struct AudioBlock {
    public let channelCount: Int
    public let frameCount: Int
    @usableFromInline let base: UnsafeMutablePointer<Float>
    @usableFromInline let channelStride: Int
    /// Whatever owns the memory; nil when the caller guarantees its lifetime.
    @usableFromInline let owner: AnyObject?

    public init(base: UnsafeMutablePointer<Float>, channelCount: Int, frameCount: Int, channelStride: Int, owner: AnyObject? = nil) {
        precondition(channelCount >= 1 && frameCount >= 0 && channelStride >= frameCount)
        self.owner = owner
        self.base = base
        self.channelCount = channelCount
        self.frameCount = frameCount
        self.channelStride = channelStride
    }

    /// The samples of channel `index`.
    @inlinable
    public func channel(_ index: Int) -> UnsafeMutableBufferPointer<Float> {
        precondition(index >= 0 && index < channelCount)
        return UnsafeMutableBufferPointer(start: base + index * channelStride, count: frameCount)
    }

    /// Frames `start ..< start + count` of every channel, as a block of their own.
    @inlinable
    public func frames(from start: Int, count: Int) -> AudioBlock {
        precondition(start >= 0 && count >= 0 && start + count <= frameCount)
        return AudioBlock(base: base + start, channelCount: channelCount, frameCount: count, channelStride: channelStride, owner: owner)
    }

    /// Sets every sample to zero.
    public func clear() {
        for c in 0..<channelCount { channel(c).update(repeating: 0) }
    }

    /// Copies the samples of `other`, which must have the same shape.
    public func copy(from other: AudioBlock) {
        precondition(other.channelCount == channelCount && other.frameCount == frameCount)
        for c in 0..<channelCount {
            channel(c).baseAddress!.update(from: other.channel(c).baseAddress!, count: frameCount)
        }
    }
}

/// Planar Float32 storage that owns its memory: allocate once (in `prepare`, or off the audio
/// path) and hand out `AudioBlock` views of it.
public final class AudioBuffer {
    public let channelCount: Int
    public let capacityFrames: Int
    private let storage: UnsafeMutablePointer<Float>

    public init(channelCount: Int, capacityFrames: Int) {
        precondition(channelCount >= 1 && capacityFrames >= 0)
        self.channelCount = channelCount
        self.capacityFrames = capacityFrames
        let count = max(1, channelCount * capacityFrames)
        storage = .allocate(capacity: count)
        storage.initialize(repeating: 0, count: count)
    }

    /// Copies planar channels of equal length.
    public convenience init(channels: [[Float]]) {
        precondition(!channels.isEmpty && channels.allSatisfy { $0.count == channels[0].count })
        self.init(channelCount: channels.count, capacityFrames: channels[0].count)
        for (c, samples) in channels.enumerated() {
            samples.withUnsafeBufferPointer { (storage + c * capacityFrames).update(from: $0.baseAddress!, count: $0.count) }
        }
    }

    deinit { storage.deallocate() }

    /// A view of the first `frameCount` frames (all of them by default).
    public func block(frameCount: Int? = nil) -> AudioBlock {
        let frames = frameCount ?? capacityFrames
        precondition(frames <= capacityFrames)
        return AudioBlock(base: storage, channelCount: channelCount, frameCount: frames, channelStride: capacityFrames, owner: self)
    }

    /// The samples of channel `index`, all `capacityFrames` of them.
    public func channel(_ index: Int) -> UnsafeMutableBufferPointer<Float> {
        block().channel(index)
    }

    /// A copy of the contents as one array per channel.
    public func toArrays(frameCount: Int? = nil) -> [[Float]] {
        let b = block(frameCount: frameCount)
        return (0..<channelCount).map { Array(b.channel($0)) }
    }
}
