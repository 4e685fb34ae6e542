import EarshotAlerts
import EarshotCore
import EarshotDSP
import EarshotEnhance

/// The hearing-aid path with alert awareness: detector → noise suppressor with alert
/// separation → output guard. While the detector hears an alert, the chain tells the
/// suppressor, which then lets the alert's tonal components through while it keeps reducing
/// the noise around them.
///
/// The suppressor reads that once per hop, when a frame completes. So that what it reads never
/// depends on how the input was cut into blocks, every block is worked through in slices that
/// end on the suppressor's hop boundaries: when a frame completes, the detector has heard
/// exactly the samples up to that frame's last one, whatever the block size.
public final class ListeningChain: AudioProcessor {
    public let detector: AlertDetector?
    public let suppressor: NoiseSuppressor?
    public let outputGuard: OutputLevelGuard?
    /// Whether the detector's verdict reaches the suppressor.
    private let separates: Bool
    private var hop = 1
    /// Samples into the current hop.
    private var phase = 0

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
        separates = network != nil && separate && enhance
        detector = network.map { AlertDetector(network: $0, settings: alertSettings, channel: probeChannels ? 0 : nil) }
        suppressor = enhance ? try NoiseSuppressor(model: model, strengthDB: strengthDB, separatesAlerts: separates, probeChannels: probeChannels) : nil
        outputGuard = maximumOutputDBFS.map { OutputLevelGuard(ceilingDBFS: $0) }
    }

    /// The rate devices run at, live.
    public static let liveRate = 48_000.0

    /// The rate to resample an input at `rate` to.
    public static func nativeRate(for rate: Double) -> Double { NoiseSuppressor.nativeRate(for: rate) }

    public var latencySamples: Int { suppressor?.latencySamples ?? 0 }

    public func prepare(_ spec: ProcessSpec) throws {
        try detector?.prepare(spec)
        try suppressor?.prepare(spec)
        try outputGuard?.prepare(spec)
        hop = suppressor?.hop ?? spec.maximumBlockFrames
        phase = 0
    }

    public func process(_ block: inout AudioBlock) {
        var done = 0
        while done < block.frameCount {
            let count = min(hop - phase, block.frameCount - done)
            var slice = block.frames(from: done, count: count)
            detector?.process(&slice)
            if separates { suppressor!.alertSounding = detector!.isAlerting }
            suppressor?.process(&slice)
            outputGuard?.process(&slice)
            phase = (phase + count) % hop
            done += count
        }
    }

    public func reset() {
        detector?.reset()
        suppressor?.reset()
        outputGuard?.reset()
        phase = 0
    }

    /// What the chain does, for `--verbose`.
    public var description: String {
        var stages: [String] = []
        if detector != nil { stages.append("alert detector") }
        if let suppressor { stages.append(suppressor.separatesAlerts ? "noise suppressor with alert separation" : "noise suppressor") }
        if outputGuard != nil { stages.append("output guard") }
        return stages.isEmpty ? "pass-through" : stages.joined(separator: " → ")
    }
}
