import EarshotCore

/// Where a chain's input comes from: a file, a raw stream or a device.
public protocol AudioSource: AnyObject {
    var sampleRate: Double { get }
    var channelCount: Int { get }
    /// Fills up to `block.frameCount` frames; returns how many. 0 means the source has ended.
    func read(into block: AudioBlock) throws -> Int
}

/// Where a chain's output goes.
public protocol AudioSink: AnyObject {
    func write(_ block: AudioBlock) throws
    /// Called once after the last block: flush, close, commit.
    func finish() throws
    /// Called instead of `finish` when the run fails: leave nothing half-done behind.
    func discard()
}

extension AudioSink {
    public func discard() {}
}
