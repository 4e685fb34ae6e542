import Foundation

/// An adaptive Bayesian procedure: a posterior over each threshold, and every tone placed
/// where its answer is expected to teach the most.
///
/// The listener is modelled by a psychometric function, p(heard | level L, threshold θ) =
/// γ + (1 − γ − λ)·Φ((L − θ)/σ), with the false-alarm rate γ taken from the session's catch
/// trials, a lapse rate λ and a spread σ of 4 dB. The posterior over θ (−10…120 dB HL in 1 dB
/// steps) starts from what is already known: the same ear at neighbouring frequencies (an
/// audiogram rarely jumps more than 15 dB an octave) and the other ear at this frequency.
/// The next level maximises the expected drop in entropy; a frequency is done when the
/// posterior's standard deviation is under 4 dB (3 dB for the 1 kHz retest, whose difference
/// is a reliability check), and the threshold is the posterior mean.
public struct BayesianProcedure: ThresholdProcedure {
    public let name = "bayesian"
    public let plan: TestPlan
    public private(set) var results: [ThresholdResult] = []
    public private(set) var retestDifferenceDB: Double?
    private var queue: [(ear: Ear, frequency: Double, isRetest: Bool)]
    private var run: Run?
    private var falseAlarmRate = 0.02
    private var pendingLevel: Double?

    static let grid: [Double] = (-10...120).map(Double.init)
    static let spreadDB = 4.0
    static let lapseRate = 0.02
    static let targetSD = 4.0
    static let minimumTrials = 3
    static let maximumTrials = 14
    static let retestTargetSD = 3.0
    static let retestMaximumTrials = 8

    private struct Run {
        var ear: Ear, frequency: Double, isRetest: Bool
        var logPosterior: [Double]
        var trials = 0
        var lastLevel: Double?
    }

    public init(plan: TestPlan) {
        self.plan = plan
        // Both ears at each frequency before moving on, so each informs the other.
        var queue: [(Ear, Double, Bool)] = []
        for frequency in plan.clinicalOrder {
            for ear in plan.ears { queue.append((ear, frequency, false)) }
        }
        if plan.frequencies.contains(1000), let ear = plan.ears.first { queue.append((ear, 1000, true)) }
        self.queue = queue
    }

    /// The first estimate stops at a posterior SD of 4 dB and the retest at 3 dB: their
    /// difference spreads by about 5 dB, more for listeners with shallow psychometric functions.
    public var retestToleranceDB: Double { 15 }

    public mutating func assumeFalseAlarmRate(_ rate: Double) {
        falseAlarmRate = min(0.4, max(0.005, rate))
    }

    public mutating func nextTone() -> Tone? {
        if run == nil {
            guard !queue.isEmpty else { return nil }
            let next = queue.removeFirst()
            run = Run(ear: next.ear, frequency: next.frequency, isRetest: next.isRetest,
                      logPosterior: prior(next.ear, next.frequency, isRetest: next.isRetest))
        }
        let level = pendingLevel ?? bestLevel(run!)
        pendingLevel = level
        return Tone(ear: run!.ear, frequencyHz: run!.frequency, levelDBHL: level)
    }

    public mutating func record(_ answer: Answer, to tone: Tone) {
        guard var current = run else { return }
        pendingLevel = nil
        let heard = answer.isHeard
        for (i, theta) in Self.grid.enumerated() {
            let p = probabilityHeard(level: tone.levelDBHL, threshold: theta)
            current.logPosterior[i] += log(heard ? p : 1 - p)
        }
        current.trials += 1
        current.lastLevel = tone.levelDBHL
        let (mean, sd) = Self.moments(current.logPosterior)
        let maximum = plan.maximum(current.ear, current.frequency)
        let limit = current.isRetest ? Self.retestMaximumTrials : Self.maximumTrials
        let target = current.isRetest ? Self.retestTargetSD : Self.targetSD
        let beyondReach = Self.probabilityAbove(maximum, current.logPosterior)
        if (current.trials >= Self.minimumTrials && (sd <= target || beyondReach > 0.9)) || current.trials >= limit {
            finish(current, threshold: beyondReach > 0.5 ? nil : mean)
        } else {
            run = current
        }
    }

    private func probabilityHeard(level: Double, threshold: Double) -> Double {
        let gamma = falseAlarmRate, lambda = Self.lapseRate
        return gamma + (1 - gamma - lambda) * 0.5 * erfc(-(level - threshold) / (Self.spreadDB * 2.0.squareRoot()))
    }

    /// Gaussian beliefs from what is known already, multiplied, over a floor that keeps any
    /// threshold possible.
    private func prior(_ ear: Ear, _ frequency: Double, isRetest: Bool) -> [Double] {
        var beliefs: [(mean: Double, sd: Double)] = []
        let found = results.filter { $0.thresholdDBHL != nil }
        if isRetest, let first = found.first(where: { $0.ear == ear && $0.frequencyHz == frequency }) {
            beliefs.append((first.thresholdDBHL!, 10))
        } else {
            if let nearest = results.nearestFound(ear, to: frequency) {
                let octaves = abs(log2(nearest.frequencyHz / frequency))
                beliefs.append((nearest.thresholdDBHL, 8 + 12 * octaves))
            }
            if let other = found.first(where: { $0.ear == ear.other && $0.frequencyHz == frequency }) {
                beliefs.append((other.thresholdDBHL!, 18))
            }
        }
        if beliefs.isEmpty { beliefs.append((20, 30)) }
        let density = Self.grid.map { theta in
            let gaussian = beliefs.reduce(0.0) { $0 - pow((theta - $1.mean) / $1.sd, 2) / 2 }
            return exp(gaussian) + 0.002  // the floor: nothing is ruled out
        }
        return density.map { log($0) }
    }

    /// The level whose answer is expected to shrink the posterior's entropy the most.
    private func bestLevel(_ run: Run) -> Double {
        let maximum = plan.maximum(run.ear, run.frequency)
        let posterior = Self.normalized(run.logPosterior)
        var best = (level: maximum, gain: -Double.infinity)
        let currentEntropy = Self.entropy(posterior)
        for level in stride(from: TestPlan.minimumDBHL, through: maximum, by: 1) {
            var heardMass = 0.0
            var heardPosterior = [Double](repeating: 0, count: posterior.count)
            var missedPosterior = [Double](repeating: 0, count: posterior.count)
            for (i, theta) in Self.grid.enumerated() {
                let p = probabilityHeard(level: level, threshold: theta)
                heardPosterior[i] = posterior[i] * p
                missedPosterior[i] = posterior[i] * (1 - p)
                heardMass += heardPosterior[i]
            }
            let missedMass = 1 - heardMass
            guard heardMass > 1e-9, missedMass > 1e-9 else { continue }
            let expected = heardMass * Self.entropy(heardPosterior.map { $0 / heardMass })
                + missedMass * Self.entropy(missedPosterior.map { $0 / missedMass })
            var gain = currentEntropy - expected
            // Never the same level twice in a row: a listener hears a repeat as a cue.
            if level == run.lastLevel { gain *= 0.5 }
            if gain > best.gain { best = (level, gain) }
        }
        return best.level
    }

    private mutating func finish(_ run: Run, threshold: Double?) {
        self.run = nil
        let rounded = threshold.map { ($0 * 10).rounded() / 10 }
        let difference = results.record(
            run.ear, run.frequency, threshold: rounded, presentations: run.trials, isRetest: run.isRetest, plan: plan)
        if run.isRetest { retestDifferenceDB = difference }
    }

    static func normalized(_ logDensity: [Double]) -> [Double] {
        let top = logDensity.max() ?? 0
        let density = logDensity.map { exp($0 - top) }
        let total = density.reduce(0, +)
        return density.map { $0 / total }
    }

    static func entropy(_ p: [Double]) -> Double {
        p.reduce(0) { $1 > 0 ? $0 - $1 * log($1) : $0 }
    }

    static func moments(_ logDensity: [Double]) -> (mean: Double, sd: Double) {
        let p = normalized(logDensity)
        let mean = zip(grid, p).reduce(0) { $0 + $1.0 * $1.1 }
        let variance = zip(grid, p).reduce(0) { $0 + pow($1.0 - mean, 2) * $1.1 }
        return (mean, variance.squareRoot())
    }

    static func probabilityAbove(_ level: Double, _ logDensity: [Double]) -> Double {
        zip(grid, normalized(logDensity)).reduce(0) { $1.0 > level ? $0 + $1.1 : $0 }
    }
}
