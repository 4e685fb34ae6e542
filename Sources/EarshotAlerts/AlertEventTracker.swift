import Foundation

/// An alert the detector heard.
public struct AlertEvent: Equatable, Sendable {
    public var alertClass: AlertClass
    /// When the detector announced it, seconds from the start of the input.
    public var start: Double
    /// When it fell silent (the last moment it was still heard).
    public var end: Double
    /// The highest smoothed probability while it lasted.
    public var confidence: Double
}

/// Turns the classifier's decisions into events: smoothing over the last few decisions,
/// hysteresis (a high threshold to begin, a low one to go on), a minimum duration before an
/// event is announced, and a hold that bridges the pauses of temporal patterns (a smoke
/// alarm's temporal-three is silent 1.5 s between bursts). Classes are tracked independently.
/// A second, sustained route announces a class the network is fairly sure of for seconds on end
/// (a siren passing in traffic) though it never reaches its on-threshold.
public struct AlertEventTracker {
    public struct Settings: Sendable {
        /// Decisions averaged (at 100 ms apart, 0.3 s).
        public var smoothing = 3
        /// Per class (in `AlertClass` order), the decisions averaged where the class is smoothed
        /// otherwise than `smoothing`; nil: over `smoothing`. A class is weighed against the
        /// others at its own depth.
        public var classSmoothing = [Int?](repeating: nil, count: AlertClass.allCases.count)
        /// The smoothed probability an event must reach to begin, per class (in `AlertClass`
        /// order): the operating point. The shipped network carries its own, chosen on the
        /// development set (`AlertNetwork.defaultThresholds`).
        public var onThresholds = [Float](repeating: 0.6, count: AlertClass.allCases.count)
        /// The smoothed probability an event needs to go on (never above its class's
        /// `onThresholds`).
        public var offThreshold: Float = 0.3
        /// How long the smoothed probability must stay above its class's threshold before the event
        /// is announced.
        public var minimumSeconds = 0.2
        /// A smoothed probability at which an event is announced at once, without waiting
        /// `minimumSeconds` (never below the class's own threshold): an alert the network is sure
        /// of need not prove itself for longer. nil: every event waits.
        public var sureThreshold: Float? = nil
        /// How long it may stay below `offThreshold` without ending the event.
        public var holdSeconds = 2.5
        /// Decisions averaged for the sustained route (20: the last 2 s).
        public var sustainedDecisions = 20
        /// Per class (in `AlertClass` order), the probability averaged over `sustainedDecisions`
        /// at which the class is announced, if it is the most likely over them, whatever its
        /// on-threshold; infinity: the class has no sustained route.
        public var sustainedThresholds = [Float](repeating: .infinity, count: AlertClass.allCases.count)
        /// The smoothed probability of any alert class at which separation starts, below the
        /// announcement thresholds: a separator opened for nothing only lets tonal peaks pass
        /// unreduced, while one that waits for the announcement lets an alert be attenuated.
        public var separationThreshold: Float = 0.3
        public init() {}

        public init(thresholds: [AlertClass: Float]) {
            for (alertClass, threshold) in thresholds { self[threshold: alertClass] = threshold }
        }

        public subscript(threshold alertClass: AlertClass) -> Float {
            get { onThresholds[AlertClass.allCases.firstIndex(of: alertClass)!] }
            set { onThresholds[AlertClass.allCases.firstIndex(of: alertClass)!] = newValue }
        }

        /// Moves a class's on-threshold and its sustained threshold with it, so that a class
        /// made less (or more) sensitive is so by both routes.
        public mutating func move(_ alertClass: AlertClass, to threshold: Float) {
            let index = AlertClass.allCases.firstIndex(of: alertClass)!
            sustainedThresholds[index] = min(1, sustainedThresholds[index] + threshold - onThresholds[index])
            onThresholds[index] = threshold
        }
    }

    public enum Change: Equatable, Sendable {
        case began(AlertEvent)
        case ended(AlertEvent)
    }

    private enum Phase {
        case idle, candidate(since: Double), active
        var isIdle: Bool { if case .idle = self { true } else { false } }
        var isActive: Bool { if case .active = self { true } else { false } }
    }

    private struct ClassState {
        var phase = Phase.idle
        var event = AlertEvent(alertClass: .siren, start: 0, end: 0, confidence: 0)
        var lastHeard = 0.0
    }

    public let settings: Settings
    private let depths: [Int]  // per alert class, decisions averaged
    private let deepest: Int
    private var recent: [Float]  // deepest × classes, ring
    private var recentCount = 0
    private var lasting: [Float]  // sustainedDecisions × classes, ring
    private var states: [ClassState]
    private var smoothed: [Float]  // over `smoothing`
    private var classSmoothed: [Float]  // every class over one class's depth, where it differs
    private var sustained: [Float]  // the mean over `lasting`, once it is full

    public init(settings: Settings = Settings()) {
        precondition(AlertNetwork.classes == ["background"] + AlertClass.allCases.map(\.rawValue))
        precondition(settings.onThresholds.count == AlertClass.allCases.count)
        precondition(settings.sustainedThresholds.count == AlertClass.allCases.count)
        precondition(settings.classSmoothing.count == AlertClass.allCases.count)
        self.settings = settings
        depths = settings.classSmoothing.map { max(1, $0 ?? settings.smoothing) }
        deepest = max(max(1, settings.smoothing), depths.max()!)
        recent = [Float](repeating: 0, count: deepest * AlertNetwork.classes.count)
        lasting = [Float](repeating: 0, count: max(1, settings.sustainedDecisions) * AlertNetwork.classes.count)
        sustained = [Float](repeating: 0, count: AlertNetwork.classes.count)
        states = [ClassState](repeating: ClassState(), count: AlertClass.allCases.count)
        smoothed = [Float](repeating: 0, count: AlertNetwork.classes.count)
        classSmoothed = smoothed
    }

    /// Whether an alert may be sounding: one is announced or about to be, or some alert class
    /// is at least `separationThreshold` likely. The separator listens to this.
    public var isAlerting: Bool {
        states.contains { !$0.phase.isIdle } || smoothed.dropFirst().contains { $0 >= settings.separationThreshold }
    }

    /// One decision at `time` seconds (the end of the window it saw); `report` hears every
    /// event that begins or ends.
    public mutating func update(probabilities: UnsafePointer<Float>, time: Double, report: (Change) -> Void) {
        let classes = AlertNetwork.classes.count, depth = max(1, settings.smoothing)
        let slot = recentCount % deepest, longDepth = max(1, settings.sustainedDecisions)
        let longSlot = recentCount % longDepth
        for k in 0..<classes {
            recent[slot * classes + k] = probabilities[k]
            lasting[longSlot * classes + k] = probabilities[k]
        }
        recentCount += 1
        let heardLong = recentCount >= longDepth
        for k in 0..<classes {
            smoothed[k] = mean(of: k, over: depth)
            if heardLong {
                var sum: Float = 0
                for s in 0..<longDepth { sum += lasting[s * classes + k] }
                sustained[k] = sum / Float(longDepth)
            }
        }
        let mostSustained = heardLong ? sustained.max()! : .infinity
        for (index, alertClass) in AlertClass.allCases.enumerated() {
            let ownDepth = depths[index] != depth
            if ownDepth {
                for k in 0..<classes { classSmoothed[k] = mean(of: k, over: depths[index]) }
            }
            // The network's classes: background, then AlertClass's order.
            let p = ownDepth ? classSmoothed[index + 1] : smoothed[index + 1]
            let mostLikely = ownDepth ? classSmoothed.max()! : smoothed.max()!
            let onThreshold = settings.onThresholds[index]
            let sure = settings.sureThreshold.map { p >= max($0, onThreshold) } ?? false
            let long = sustained[index + 1]
            let lastingLong = long >= settings.sustainedThresholds[index] && long >= mostSustained
            var state = states[index]
            func announce() {
                state.phase = .active
                state.event = AlertEvent(alertClass: alertClass, start: time, end: time, confidence: Double(p))
                state.lastHeard = time
                report(.began(state.event))
            }
            switch state.phase {
            case .idle:
                // Only the most likely class may begin: one sound, one announcement (a smoke
                // alarm's warble is not also a siren). Another class already announced does not
                // stop it: a car horn in traffic must not hide the siren that follows it.
                if lastingLong {
                    announce()
                } else if p >= onThreshold && p >= mostLikely {
                    state.phase = .candidate(since: time)
                    state.lastHeard = time
                    if sure { announce() }
                }
            case .candidate(let since):
                if lastingLong || (p >= onThreshold && (time - since >= settings.minimumSeconds - 1e-9 || sure)) {
                    announce()
                } else if p < onThreshold {
                    state.phase = .idle
                }
            case .active:
                if p >= min(settings.offThreshold, onThreshold) {
                    state.lastHeard = time
                    state.event.confidence = max(state.event.confidence, Double(p))
                } else if time - state.lastHeard > settings.holdSeconds {
                    state.event.end = state.lastHeard
                    state.phase = .idle
                    report(.ended(state.event))
                }
            }
            states[index] = state
        }
    }

    /// Class `k`'s probability averaged over the last `depth` decisions (fewer at the start).
    private func mean(of k: Int, over depth: Int) -> Float {
        let classes = AlertNetwork.classes.count, filled = min(recentCount, depth)
        var sum: Float = 0
        for back in 0..<filled { sum += recent[((recentCount - 1 - back) % deepest) * classes + k] }
        return sum / Float(max(1, filled))
    }

    /// Ends every event still going, at `time` (the end of the input).
    public mutating func finish(at time: Double, report: (Change) -> Void) {
        for index in states.indices {
            if states[index].phase.isActive {
                states[index].event.end = min(time, states[index].lastHeard)
                report(.ended(states[index].event))
            }
            states[index].phase = .idle
        }
    }

    public mutating func reset() {
        for i in recent.indices { recent[i] = 0 }
        for i in lasting.indices { lasting[i] = 0 }
        recentCount = 0
        for i in states.indices { states[i] = ClassState() }
        for i in smoothed.indices { smoothed[i] = 0 }
        for i in classSmoothed.indices { classSmoothed[i] = 0 }
        for i in sustained.indices { sustained[i] = 0 }
    }
}
