import EarshotAlerts
import EarshotCore
import Foundation

/// The network that hears one sound, recorded again, as the same sound: a second of the alert
/// detector's features (log-mel and tonality) mapped to a point on the unit sphere, where two
/// recordings of one doorbell through other rooms, microphones, levels and cuts lie close and
/// other sounds (another chime a few notes away among them) lie apart. Trained by
/// `training/train_sounds.py`; run with the alert detector's code.
///
/// It comes with its *bank*: embeddings of hours of audio that is no one's doorbell (read speech,
/// spoken digits, tonal music, beeps, real urban sound and street music), kept so that every
/// point of that audio lies close to one of them. A sound's threshold is set above the best its
/// enrollment scores there (`SoundDetector.Sound`).
public final class SoundEmbedding: @unchecked Sendable {
    /// Frames between embeddings: one every 100 ms.
    public static let stride = 5
    public static var secondsPerEmbedding: Double { Double(stride * AlertFeatures.hop) / AlertFeatures.sampleRate }

    let network: AlertNetwork
    public var size: Int { network.outputCount }
    public var windowFrames: Int { network.windowFrames }
    /// count × size values, each row of unit length.
    public let bank: [Float]
    public var bankCount: Int { bank.count / size }
    /// Hours of audio the bank stands for (metadata `bank_hours`).
    public let bankHours: Double

    /// The network and bank shipped with Earshot, loaded once.
    public static func bundled() throws -> SoundEmbedding {
        try loaded.get()
    }

    private static let loaded: Result<SoundEmbedding, Error> = Result {
        guard let url = Bundle.module.url(forResource: "SoundEmbedding", withExtension: "safetensors") else {
            throw ModelError.missing(model: "the sound matcher", file: "SoundEmbedding.safetensors")
        }
        return try SoundEmbedding(SafeTensors(contentsOf: url))
    }

    public init(_ model: SafeTensors) throws {
        network = try AlertNetwork(model)
        guard network.embedding else {
            throw ModelError.notAnEmbedding(model: "the sound matcher")
        }
        let size = network.outputCount
        guard let shape = model.tensors["bank"]?.shape, shape.count == 2, shape[1] == size, shape[0] > 0 else {
            throw ModelError.noBank(model: "the sound matcher", size: size)
        }
        bank = try model.tensor("bank", shape: shape)
        bankHours = Double(model.metadata["bank_hours"] ?? "") ?? 0
    }

    /// The embeddings of a whole recording (16 kHz), one every 100 ms from the first whole
    /// window on, flattened (count × size); at least one, however short the recording.
    public func embeddings(of samples: [Float]) -> [Float] {
        let stream = EmbeddingStream(self)
        var out: [Float] = []
        samples.withUnsafeBufferPointer { buffer in
            stream.push(buffer) { _, embedding in out.append(contentsOf: embedding) }
        }
        if out.isEmpty { out = stream.embedNow() }
        return out
    }
}

/// Embeddings of a stream as it arrives: the alert features of each 20 ms frame, and every
/// 100 ms the embedding of the last second. Its buffers are made once, so `push` does not
/// allocate.
public final class EmbeddingStream {
    private let model: SoundEmbedding
    private var features: AlertFeatures
    private let inference: AlertInference
    private var output: [Float]

    public init(_ model: SoundEmbedding) {
        self.model = model
        features = AlertFeatures(windowFrames: model.windowFrames)
        inference = AlertInference(network: model.network)
        output = [Float](repeating: 0, count: model.size)
    }

    /// Feeds 16 kHz samples; `onEmbedding` gets each embedding with the time its window ends
    /// (seconds from the stream's start).
    public func push(_ samples: UnsafeBufferPointer<Float>, onEmbedding: (Double, [Float]) -> Void) {
        let stride = SoundEmbedding.stride, window = model.windowFrames
        features.push(samples) { features in
            let count = features.frameCount
            guard count >= window, (count - window) % stride == 0 else { return }
            embed(&features)
            onEmbedding(Double(count * AlertFeatures.hop) / AlertFeatures.sampleRate, output)
        }
    }

    /// The embedding of the window as it stands (frames before the stream began are silence).
    func embedNow() -> [Float] {
        embed(&features)
        return output
    }

    private func embed(_ features: inout AlertFeatures) {
        features.window(into: inference.input)
        inference.start()
        inference.finish()
        output.withUnsafeMutableBufferPointer { inference.embedding(into: $0.baseAddress!) }
    }

    public func reset() { features.reset() }
}
