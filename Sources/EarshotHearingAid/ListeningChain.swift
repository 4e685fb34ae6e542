import EarshotAlerts
import EarshotCore
import EarshotDSP
import EarshotEnhance

/// The hearing-aid path with alert awareness: detector → noise suppressor with alert
/// separation → amplification → output guard. While the detector hears an alert, the chain tells the
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
    /// The compressor on its own, when there is amplification and no suppressor to host it.
    public let amplifier: WideDynamicRangeCompressor?
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
    ///   - amplification: a hearing aid's compression, per ear: the chain then takes the
    ///     microphone on channel 0 and a copy of it on channel 1, suppresses noise on channel 0
    ///     and applies the same gains to both, and amplifies channel 0 for the left ear and
    ///     channel 1 for the right (inside the suppressor's STFT, so it adds no delay). Alerts
    ///     pass through it too: audible, and under the ceiling.
    ///   - maximumOutputDBFS: the output ceiling; nil for none (measurement only).
    ///   - alertSettings: the event tracker's settings; nil for the network's operating point.
    public init(enhance: Bool = true, model: NoiseSuppressor.Model = .learned, strengthDB: Double = NoiseSuppressor.defaultStrengthDB, detector network: AlertNetwork?,
                alertSettings: AlertEventTracker.Settings? = nil,
                separate: Bool = true, probeChannels: Bool = false, amplification: Compression? = nil, maximumOutputDBFS: Double?) throws {
        separates = network != nil && separate && enhance
        let oneMicrophone = probeChannels || amplification != nil
        // The limiter inside the STFT holds the peaks under the ceiling; the guard stays last.
        var amplification = amplification
        if var compression = amplification, let ceiling = maximumOutputDBFS {
            compression.limitDBFS = min(compression.limitDBFS ?? 0, ceiling)
            amplification = compression
        }
        detector = network.map { AlertDetector(network: $0, settings: alertSettings, channel: oneMicrophone ? 0 : nil) }
        suppressor = enhance
            ? try NoiseSuppressor(model: model, strengthDB: strengthDB, separatesAlerts: separates, probeChannels: oneMicrophone, amplification: amplification)
            : nil
        amplifier = enhance ? nil : try amplification.map(WideDynamicRangeCompressor.init)
        outputGuard = maximumOutputDBFS.map { OutputLevelGuard(ceilingDBFS: $0) }
    }

    /// The rate devices run at, live.
    public static let liveRate = 48_000.0

    /// The rate to resample an input at `rate` to.
    public static func nativeRate(for rate: Double) -> Double { NoiseSuppressor.nativeRate(for: rate) }

    public var latencySamples: Int { suppressor?.latencySamples ?? amplifier?.latencySamples ?? 0 }

    public func prepare(_ spec: ProcessSpec) throws {
        try detector?.prepare(spec)
        try suppressor?.prepare(spec)
        try amplifier?.prepare(spec)
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
            amplifier?.process(&slice)
            outputGuard?.process(&slice)
            phase = (phase + count) % hop
            done += count
        }
    }

    public func reset() {
        detector?.reset()
        suppressor?.reset()
        amplifier?.reset()
        outputGuard?.reset()
        phase = 0
    }

    /// What the chain does, for `--verbose`.
    public var description: String {
        var stages: [String] = []
        if detector != nil { stages.append("alert detector") }
        if let suppressor { stages.append(suppressor.separatesAlerts ? "noise suppressor with alert separation" : "noise suppressor") }
        if let amplification = suppressor?.amplification ?? amplifier?.compression {
            stages.append(amplification.limitDBFS == nil ? "amplification" : "amplification with a look-ahead limiter")
        }
        if outputGuard != nil { stages.append("output guard") }
        return stages.isEmpty ? "pass-through" : stages.joined(separator: " → ")
    }
}
