import EarshotCore
import EarshotDSP
import EarshotEnhance

/// The hearing-aid path with alert awareness: detector → noise suppressor with alert
/// separation → output guard. The detector opens the gate while an alert sounds; the
/// suppressor then lets the alert's tonal components through at unity gain while it keeps
/// reducing the noise around them.
public final class ListeningChain: AudioProcessor {
    public let detector: AlertDetector?
    private var chain = ProcessorChain()

    /// - Parameters:
    ///   - enhance: reduce noise (`strengthDB` at most) with the suppressor's `model`.
    ///   - detector: listen for alerts; with `separate`, keep them out of the noise reduction.
    ///   - probeChannels: channels after the first are processed with the first's gains (see
    ///     `NoiseSuppressor.probeChannels`); the detector listens to the first only.
    ///   - maximumOutputDBFS: the output ceiling; nil for none (measurement only).
    ///   - alertSettings: the event tracker's settings; nil for the network's operating point.
    public init(enhance: Bool = true, model: NoiseSuppressor.Model = .learned, strengthDB: Double = NoiseSuppressor.defaultStrengthDB, detector network: AlertNetwork?,
                alertSettings: AlertEventTracker.Settings? = nil,
                separate: Bool = true, probeChannels: Bool = false, maximumOutputDBFS: Double?) throws {
        let gate = network != nil && separate && enhance ? AlertGate() : nil
        detector = network.map { AlertDetector(network: $0, settings: alertSettings, gate: gate, channel: probeChannels ? 0 : nil) }
        if let detector { chain.append(detector) }
        if enhance { chain.append(try NoiseSuppressor(model: model, strengthDB: strengthDB, alertGate: gate, probeChannels: probeChannels)) }
        if let maximumOutputDBFS { chain.append(OutputLevelGuard(ceilingDBFS: maximumOutputDBFS)) }
    }

    /// The rate devices run at, live.
    public static let liveRate = 48_000.0

    /// The rate to resample an input at `rate` to.
    public static func nativeRate(for rate: Double) -> Double { NoiseSuppressor.nativeRate(for: rate) }

    public var latencySamples: Int { chain.latencySamples }
    public func prepare(_ spec: ProcessSpec) throws { try chain.prepare(spec) }
    public func process(_ block: inout AudioBlock) { chain.process(&block) }
    public func reset() { chain.reset() }

    /// What the chain does, for `--verbose`.
    public var description: String {
        chain.processors.map { processor -> String in
            switch processor {
            case is AlertDetector: "alert detector"
            case let suppressor as NoiseSuppressor: suppressor.alertGate == nil ? "noise suppressor" : "noise suppressor with alert separation"
            case is OutputLevelGuard: "output guard"
            default: "\(type(of: processor))"
            }
        }.joined(separator: " → ")
    }
}
