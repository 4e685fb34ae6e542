import Foundation

/// The modified Hughson-Westlake procedure (ISO 8253-1, ASHA 2005).
///
/// Familiarisation from 40 dB HL (20 dB steps up until heard); then down 10 dB after every
/// response and up 5 dB after every miss. Threshold is the lowest level heard on at least two
/// of at most three ascending presentations. Frequencies go 1 kHz, rising, a 1 kHz retest in
/// the first ear, then falling; each ear in turn.
public struct HughsonWestlake: ThresholdProcedure {
    public let name = "hughson_westlake"
    public let plan: TestPlan
    public private(set) var results: [ThresholdResult] = []
    public private(set) var retestDifferenceDB: Double?
    private var queue: [(ear: Ear, frequency: Double, isRetest: Bool)]
    private var run: Run?

    /// Presentations after which a frequency is abandoned with the best evidence so far.
    static let presentationLimit = 30

    private struct Run {
        var ear: Ear, frequency: Double, isRetest: Bool
        var level: Double
        var familiarizing = true
        var lastHeard: Bool? = nil
        var ascending: [Double: (presented: Int, heard: Int)] = [:]
        var presentations = 0
    }

    public init(plan: TestPlan) {
        self.plan = plan
        var queue: [(Ear, Double, Bool)] = []
        for (index, ear) in plan.ears.enumerated() {
            let order = plan.clinicalOrder
            let above = order.prefix { $0 >= 1000 }
            let below = order.drop { $0 >= 1000 }
            queue += above.map { (ear, $0, false) }
            if index == 0 && plan.frequencies.contains(1000) { queue.append((ear, 1000, true)) }
            queue += below.map { (ear, $0, false) }
        }
        self.queue = queue
    }

    public mutating func nextTone() -> Tone? {
        if run == nil {
            guard !queue.isEmpty else { return nil }
            let next = queue.removeFirst()
            run = Run(ear: next.ear, frequency: next.frequency, isRetest: next.isRetest,
                      level: plan.clamp(startLevel(next.ear, next.frequency), next.ear, next.frequency))
        }
        return Tone(ear: run!.ear, frequencyHz: run!.frequency, levelDBHL: run!.level)
    }

    /// 40 dB HL at the first frequency of an ear; afterwards 15 dB above the nearest threshold
    /// already found in that ear (so the tone is clearly audible, as familiarisation wants).
    private func startLevel(_ ear: Ear, _ frequency: Double) -> Double {
        guard let nearest = results.nearestFound(ear, to: frequency) else { return 40 }
        return max(20, min(60, nearest.thresholdDBHL + 15))
    }

    public mutating func record(_ answer: Answer, to tone: Tone) {
        guard var current = run else { return }
        let heard = answer.isHeard
        let maximum = plan.maximum(current.ear, current.frequency)
        current.presentations += 1
        defer { if run != nil { run = current } }
        if current.familiarizing {
            if heard {
                current.familiarizing = false
                current.lastHeard = true
                current.level = plan.clamp(current.level - 10, current.ear, current.frequency)
            } else if current.level >= maximum {
                finish(current, threshold: nil)
            } else {
                current.level = plan.clamp(current.level + 20, current.ear, current.frequency)
            }
            return
        }
        if current.lastHeard == false {  // an ascending presentation
            var count = current.ascending[current.level] ?? (0, 0)
            count.presented += 1
            if heard { count.heard += 1 }
            current.ascending[current.level] = count
            if count.heard >= 2 {
                finish(current, threshold: current.level)
                return
            }
        }
        if !heard && current.level >= maximum && (current.ascending[maximum]?.presented ?? 0) >= 2 {
            finish(current, threshold: nil)
            return
        }
        if current.presentations >= Self.presentationLimit {
            // Out of patience: the lowest level heard on any ascent is the best estimate.
            finish(current, threshold: current.ascending.filter { $0.value.heard > 0 }.keys.min())
            return
        }
        current.lastHeard = heard
        current.level = plan.clamp(current.level + (heard ? -10 : 5), current.ear, current.frequency)
    }

    private mutating func finish(_ run: Run, threshold: Double?) {
        self.run = nil
        let difference = results.record(
            run.ear, run.frequency, threshold: threshold, presentations: run.presentations, isRetest: run.isRetest, plan: plan)
        // The retest checks reliability; the better of the two stands (ASHA).
        if let difference, let index = results.firstIndex(where: { $0.ear == run.ear && $0.frequencyHz == run.frequency }) {
            retestDifferenceDB = difference
            results[index].thresholdDBHL = min(results[index].thresholdDBHL!, threshold!)
        }
    }
}
