import Atomics
import EarshotCore
import EarshotDSP
import Foundation

/// Listens for sirens, smoke alarms, car horns and doorbells as audio passes through, unchanged.
///
/// Every 100 ms the network classifies the last second of features; the tracker turns its
/// decisions into events, which the owner collects after each block (`takeChanges`). At 48 kHz
/// the input is low-passed and decimated to the detector's 16 kHz first. Channels are mixed
/// to mono, or one is chosen. `latencySamples` is 0: the audio is not delayed; detection has its own delay
/// (the tracker's minimum duration and smoothing), which events report in their start time.
public final class AlertDetector: AudioProcessor {
    public let network: AlertNetwork
    private var features: AlertFeatures
    private var tracker: AlertEventTracker
    private var decimator: Decimator?
    private var mono: [Float] = []
    private var input: [Float] = []
    private var probabilities = [Float](repeating: 0, count: AlertNetwork.classes.count)
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
            throw EarshotError.invalidArgument("the alert detector runs at 16 or 48 kHz, not \(Int(spec.sampleRate)) Hz: resample first")
        }
        mono = [Float](repeating: 0, count: spec.maximumBlockFrames)
        input = [Float](repeating: 0, count: features.inputCount)
        reset()
    }

    public func reset() {
        features.reset()
        tracker.reset()
        decimator?.reset()
        changesRead.store(changesWritten.load(ordering: .acquiring), ordering: .releasing)
    }

    public func process(_ block: inout AudioBlock) {
        let frames = block.frameCount
        let heard = channel.map { min($0, block.channelCount - 1)...min($0, block.channelCount - 1) } ?? 0...(block.channelCount - 1)
        let scale = 1 / Float(heard.count)
        for i in 0..<frames { mono[i] = 0 }
        for c in heard {
            let samples = block.channel(c)
            for i in 0..<frames { mono[i] += samples[i] * scale }
        }
        var count = frames
        if decimator != nil {
            count = mono.withUnsafeMutableBufferPointer { decimator!.process($0.baseAddress!, count: frames) }
        }
        mono.withUnsafeBufferPointer { samples in
            features.push(UnsafeBufferPointer(rebasing: samples[0..<count])) { features in
                guard features.frameCount % 5 == 0 else { return }
                decide(features)
            }
        }
    }

    private func decide(_ features: AlertFeatures) {
        input.withUnsafeMutableBufferPointer { features.window(into: $0.baseAddress!) }
        input.withUnsafeBufferPointer { x in
            probabilities.withUnsafeMutableBufferPointer { network.classify(x.baseAddress!, probabilities: $0.baseAddress!) }
        }
        let now = Double(features.frameCount * AlertFeatures.hop) / AlertFeatures.sampleRate
        probabilities.withUnsafeBufferPointer { p in
            tracker.update(probabilities: p.baseAddress!, time: now) { record($0) }
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
