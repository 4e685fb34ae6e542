import EarshotCore
import EarshotDSP

/// What a file holds and how loud it is: levels in dBFS, 20·log10 of the peak or RMS amplitude,
/// as sox reports them, to the hundredth.
public struct AudioFileSummary: Codable, Sendable {
    public var path: String
    public var container: String
    public var encoding: String
    public var sampleFormat: String?
    public var sampleRate: Double
    public var channels: Int
    public var frames: Int
    public var durationSeconds: Double
    /// nil for digital silence (minus infinity has no JSON spelling).
    public var peakDBFS: Double?
    public var rmsDBFS: Double?
    public var channelPeakDBFS: [Double?]
    public var channelRMSDBFS: [Double?]

    /// Reads the file through; `progress` hears the frames read so far.
    public init(_ reader: AudioFileReader, progress: (Int) -> Void = { _ in }) throws {
        let info = reader.info
        var meter = LevelMeter(channelCount: info.channelCount)
        let buffer = AudioBuffer(channelCount: info.channelCount, capacityFrames: 65_536)
        while true {
            let got = try reader.read(into: buffer.block())
            if got == 0 { break }
            meter.measure(buffer.block(frameCount: got))
            progress(reader.framesRead)
        }
        let decibels = { (x: Double) -> Double? in x > 0 ? (Decibels.fromAmplitude(x) * 100).rounded() / 100 : nil }
        path = info.path
        container = info.containerName
        encoding = info.encodingName
        sampleFormat = info.sampleFormat?.rawValue
        sampleRate = info.sampleRate
        channels = info.channelCount
        frames = info.frameCount
        durationSeconds = info.durationSeconds
        peakDBFS = decibels(meter.peak)
        rmsDBFS = decibels(meter.rms)
        channelPeakDBFS = (0..<info.channelCount).map { decibels(meter.peak(channel: $0)) }
        channelRMSDBFS = (0..<info.channelCount).map { decibels(meter.rms(channel: $0)) }
    }
}
