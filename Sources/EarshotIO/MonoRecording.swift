import EarshotCore

/// A recording read whole and mixed to mono; an empty file is refused.
public struct MonoRecording: Sendable {
    public let info: AudioFileInfo
    public let samples: [Float]

    public init(path: String) throws {
        let (info, buffer) = try AudioFile.read(path: path)
        guard info.frameCount > 0 else { throw EarshotError.emptyAudio(path: path) }
        self.info = info
        samples = Self.mixed(buffer.toArrays(frameCount: info.frameCount))
    }

    public static func mixed(_ channels: [[Float]]) -> [Float] {
        guard channels.count > 1 else { return channels[0] }
        let scale = 1 / Float(channels.count)
        return channels[0].indices.map { i in channels.reduce(0) { $0 + $1[i] } * scale }
    }
}
