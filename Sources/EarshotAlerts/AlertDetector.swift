import Atomics
import EarshotCore
import EarshotDSP
import Foundation

/// Listens for sirens, smoke alarms, car horns and doorbells as audio passes through, unchanged.
///
/// Every 100 ms the network classifies the last second of features; the tracker turns its
/// decisions into events, which the owner collects after each block (`takeChanges`). A
/// classification is worked through a step at a time, one step every `stepSamples` samples of
/// input (at 16 kHz), so that no block carries all of it: a 64-frame block at 48 kHz does one
/// step, and a decision lands `decisionDelaySeconds` after the frame it is about. Where steps
/// fall depends only on the samples heard, never on how they were cut into blocks. At 48 kHz
/// the input is low-passed and decimated to the detector's 16 kHz first. Channels are mixed
/// to mono, or one is chosen. `latencySamples` is 0: the audio is not delayed; detection has its own delay
/// (the tracker's minimum duration and smoothing), which events report in their start time.
public final class AlertDetector: AudioProcessor {
    public let network: AlertNetwork
    private var features: AlertFeatures
    private var tracker: AlertEventTracker
    private var decimator: Decimator?
    private var mono: [Float] = []
    private let inference: AlertInference
    private var probabilities = [Float](repeating: 0, count: AlertNetwork.classes.count)
    /// Samples heard (at 16 kHz), and where the running classification's next step is due.
    private var heard = 0
    private var nextStepAt = 0
    /// When the frame the running classification is about ended, seconds.
    private var decisionTime = 0.0
    /// Input samples (at 16 kHz) between two steps of a classification: one 64-frame block at
    /// 48 kHz is 21⅓.
    public static let stepSamples = 21
    /// Events that began or ended, from the audio thread to the owner: a single-producer,
    /// single-consumer queue, so `takeChanges` may run on another thread than `process`.
    private let changes: UnsafeMutablePointer<AlertEventTracker.Change>
    private static let changeCapacity = 64
    private let changesWritten = ManagedAtomic<Int>(0)
    private let changesRead = ManagedAtomic<Int>(0)

    /// The channel listened to; nil mixes them all.
    public let channel: Int?

    /// `settings` nil: the tracker's defaults at the network's own operating point.
    public init(network: AlertNetwork, settings: AlertEventTracker.Settings? = nil, channel: Int? = nil) {
        self.network = network
        self.channel = channel
        features = AlertFeatures(windowFrames: network.windowFrames)
        tracker = AlertEventTracker(settings: settings ?? network.defaultSettings)
        inference = AlertInference(network: network)
        changes = .allocate(capacity: Self.changeCapacity)
        changes.initialize(repeating: .ended(AlertEvent(alertClass: .siren, start: 0, end: 0, confidence: 0)), count: Self.changeCapacity)
    }

    deinit { changes.deallocate() }

    public var latencySamples: Int { 0 }

    /// Whether an alert sounds now (announced, or about to be): changes only as a decision is
    /// made, every 100 ms of input.
    public var isAlerting: Bool { tracker.isAlerting }

    /// Seconds of input heard so far (at 16 kHz, the end of the latest frame).
    public var time: Double { Double(features.frameCount * AlertFeatures.hop) / AlertFeatures.sampleRate }

    public func prepare(_ spec: ProcessSpec) throws {
        switch spec.sampleRate {
        case AlertFeatures.sampleRate: decimator = nil
        case 3 * AlertFeatures.sampleRate: decimator = Decimator(factor: 3)
        default:
            throw EarshotError.rateNotRun(what: "the alert detector", supportedHz: [AlertFeatures.sampleRate, 3 * AlertFeatures.sampleRate], rate: spec.sampleRate)
        }
        mono = [Float](repeating: 0, count: spec.maximumBlockFrames)
        reset()
    }

    /// How long after the frame it is about a decision lands: its steps, `stepSamples` apart.
    public var decisionDelaySeconds: Double { Double(inference.stepCount * Self.stepSamples) / AlertFeatures.sampleRate }

    public func reset() {
        features.reset()
        tracker.reset()
        heard = 0
        nextStepAt = 0
        while inference.isRunning { inference.step() }
        decimator?.reset()
        changesRead.store(changesWritten.load(ordering: .acquiring), ordering: .releasing)
    }

    public func process(_ block: inout AudioBlock) {
        let frames = block.frameCount
        let listened = channel.map { min($0, block.channelCount - 1)...min($0, block.channelCount - 1) } ?? 0...(block.channelCount - 1)
        let scale = 1 / Float(listened.count)
        for i in 0..<frames { mono[i] = 0 }
        for c in listened {
            let samples = block.channel(c)
            for i in 0..<frames { mono[i] += samples[i] * scale }
        }
        var count = frames
        if decimator != nil {
            count = mono.withUnsafeMutableBufferPointer { decimator!.process($0.baseAddress!, count: frames) }
        }
        // A hop at a time, so that steps due before a frame are done before it is recorded.
        var start = 0
        while start < count {
            let end = min(count, start + AlertFeatures.hop - heard % AlertFeatures.hop)
            heard += end - start  // a frame completes only at the end of this piece
            mono.withUnsafeBufferPointer { samples in
                features.push(UnsafeBufferPointer(rebasing: samples[start..<end])) { features in
                    guard features.frameCount % 5 == 0 else { return }
                    begin(features)
                }
            }
            while inference.isRunning, nextStepAt <= heard { advance() }
            start = end
        }
    }

    /// A decision about the frame just completed: its classification starts now and advances
    /// as input arrives. One still running is finished first (with steps every `stepSamples`
    /// it ends well within the 100 ms between decisions).
    private func begin(_ features: AlertFeatures) {
        while inference.isRunning { advance() }
        features.window(into: inference.input)
        inference.start()
        decisionTime = Double(features.frameCount * AlertFeatures.hop) / AlertFeatures.sampleRate
        nextStepAt = heard + Self.stepSamples
    }

    /// One step of the running classification; the decision once it is done.
    private func advance() {
        nextStepAt += Self.stepSamples
        guard inference.step() else { return }
        probabilities.withUnsafeMutableBufferPointer { inference.probabilities(into: $0.baseAddress!) }
        probabilities.withUnsafeBufferPointer { p in
            tracker.update(probabilities: p.baseAddress!, time: decisionTime) { record($0) }
        }
    }

    private func record(_ change: AlertEventTracker.Change) {
        // 64 changes between collections: an owner that collects every 100 ms never fills it.
        let written = changesWritten.load(ordering: .relaxed)
        guard written - changesRead.load(ordering: .acquiring) < Self.changeCapacity else { return }
        changes[written % Self.changeCapacity] = change
        changesWritten.store(written + 1, ordering: .releasing)
    }

    /// Hands over the events that began or ended since the last call (off the audio path, from
    /// any one thread).
    public func takeChanges(_ body: (AlertEventTracker.Change) -> Void) {
        let read = changesRead.load(ordering: .relaxed), written = changesWritten.load(ordering: .acquiring)
        for i in read..<written { body(changes[i % Self.changeCapacity]) }
        changesRead.store(written, ordering: .releasing)
    }

    /// Ends every event still going at the end of the input.
    public func finish(_ body: (AlertEventTracker.Change) -> Void) {
        takeChanges(body)
        tracker.finish(at: time, report: body)
    }
}

/// Low-pass (Kaiser-windowed sinc at 0.9 × the new Nyquist) and keep every `factor`-th sample.
struct Decimator {
    let factor: Int
    private let taps: [Float]
    private var history: [Float]
    private var position = 0
    private var phase = 0

    init(factor: Int) {
        self.factor = factor
        let length = 32 * factor + 1
        let cutoff = 0.9 / Double(factor)  // of the input's Nyquist
        let window = Window.kaiser(beta: 8).coefficients(count: length, periodic: false)
        taps = (0..<length).map { n in
            let x = Double(n - length / 2)
            let sinc = x == 0 ? 1 : sin(Double.pi * cutoff * x) / (Double.pi * cutoff * x)
            return Float(cutoff * sinc) * window[n]
        }
        history = [Float](repeating: 0, count: 2 * length)
    }

    /// Decimates `count` samples in place; returns how many came out.
    mutating func process(_ samples: UnsafeMutablePointer<Float>, count: Int) -> Int {
        let length = taps.count
        var produced = 0
        for i in 0..<count {
            // A doubled ring: the latest `length` samples are always contiguous.
            history[position] = samples[i]
            history[position + length] = samples[i]
            position = (position + 1) % length
            phase += 1
            if phase == factor {
                phase = 0
                var sum: Float = 0
                for k in 0..<length { sum += taps[k] * history[position + k] }
                samples[produced] = sum
                produced += 1
            }
        }
        return produced
    }

    mutating func reset() {
        for i in history.indices { history[i] = 0 }
        position = 0
        phase = 0
    }
}
