import EarshotAlerts
import EarshotCore
import EarshotHearingAid
import EarshotIO

/// `earshot demo`: the listening chain end to end on a scene synthesised from a seed, written to
/// a file and read back as any recording would be: alerts detected as they happen, and how much
/// of each reaches the ears with and without the separator.
public struct ListeningDemo {
    public static let sampleRate = 16_000.0
    public static let durationSeconds = 40.0

    /// One alert placed in the scene, and what reached the output.
    public struct Alert: Codable, Sendable {
        public var `class`: String
        public var start: Double
        public var end: Double
        public var snr: Double
        public var detected: Bool
        /// Alert level out − in over the alert, with the separator and without it, dB.
        public var keptDB: Double
        public var keptWithoutSeparatorDB: Double
        /// The rest (speech and noise) out − in over the alert, dB.
        public var restDB: Double
    }

    public let durationSeconds: Double
    public let latencySamples: Int
    public let alerts: [Alert]
    /// The alerts the detector announced, as they ended.
    public let events: [AlertEvent]

    /// Writes the scene for `seed` to `path`, reads it back and runs the chain on it; `heard`
    /// hears each alert as it begins and ends.
    public init(seed: UInt64, sceneFile path: String, heard: (AlertEventTracker.Change) -> Void) throws {
        let rate = Self.sampleRate
        let generated = try SceneGenerator.generate(seed: seed, durationSeconds: Self.durationSeconds, sampleRate: rate, material: SceneMaterial(), alertsPerMinute: 6)
        try AudioFile.write(AudioBuffer(channels: [generated.samples]), to: path, sampleRate: rate, sampleFormat: .f32)
        // The mix as a recording; its alert and the rest ride along as probe channels.
        let (info, buffer) = try AudioFile.read(path: path)
        let mix = buffer.toArrays()[0]
        let network = try AlertNetwork.bundled()
        var events: [AlertEvent] = []
        func hear(_ change: AlertEventTracker.Change) {
            if case .ended(let event) = change { events.append(event) }
            heard(change)
        }
        var detector: AlertDetector?
        let with = try AlertProbe(mix: mix, alerts: generated.alerts, sampleRate: rate, network: network, separate: true) {
            detector = $0
            $0.takeChanges(hear)
        }
        detector?.finish(hear)
        let without = try AlertProbe(mix: mix, alerts: generated.alerts, sampleRate: rate, network: network, separate: false)
        alerts = generated.labels.map { label in
            let range = Int(label.start * rate)..<min(mix.count, Int(label.end * rate))
            return Alert(
                class: label.alertClass.rawValue, start: label.start, end: label.end, snr: label.snrDB,
                detected: events.contains { $0.alertClass == label.alertClass && $0.start <= label.end + 1 && $0.end >= label.start },
                keptDB: with.alertChangeDB(over: range), keptWithoutSeparatorDB: without.alertChangeDB(over: range),
                restDB: with.restChangeDB(over: range))
        }
        durationSeconds = info.durationSeconds
        latencySamples = with.latencySamples
        self.events = events
    }
}
