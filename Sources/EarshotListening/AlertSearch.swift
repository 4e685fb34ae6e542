import EarshotAlerts
import EarshotCore
import EarshotIO

extension AlertDetector {
    /// Hears a whole recording (any rate; channels are mixed) as a stream, 100 ms at a time:
    /// `changes` hears each alert as it is announced and as it ends. Returns the seconds heard.
    @discardableResult
    public static func hear(file path: String, network: AlertNetwork, settings: AlertEventTracker.Settings,
                            changes: @escaping (AlertEventTracker.Change) -> Void) throws -> Double {
        let reader = try AudioFileReader(path: path)
        let source: AudioSource = reader.sampleRate == AlertFeatures.sampleRate ? reader : try ResampledSource(reader, sampleRate: AlertFeatures.sampleRate)
        let detector = AlertDetector(network: network, settings: settings)
        try Runner(blockFrames: 1600, progress: { _ in detector.takeChanges(changes) }).run(source: source, chain: detector, sink: DiscardingSink())
        detector.finish(changes)
        return reader.info.durationSeconds
    }
}
