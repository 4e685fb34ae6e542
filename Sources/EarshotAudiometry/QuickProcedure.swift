import EarshotCore
import Foundation

/// The quick procedure of the app Earshot's hearing test grew from.
///
/// Per frequency and ear, a first estimate comes from a rising tone — here tones 10 dB apart,
/// the discrete form of "rises until you let go", from 0 dB HL at the first frequency and from
/// 20 dB below the nearest threshold after that — that stops at the first answer. Then tones go
/// to a random unfinished ear and the listener names the ear: a right answer moves down 10 dB,
/// no answer up 5 dB, a wrong ear down 20 dB (the tone was loud enough to cross the head). The threshold is the mean of three correct answers that followed a miss.
public struct QuickProcedure: ThresholdProcedure {
    public let name = "quick"
    public let plan: TestPlan
    public private(set) var results: [ThresholdResult] = []
    public private(set) var retestDifferenceDB: Double?
    private var random: SeededRandom
    private var frequencyQueue: [Double]
    private var active: [Track] = []
    private var pending: Int?  // index into `active` of the tone asked for
    private var retestDone = false

    static let answersNeeded = 3
    static let retestAnswersNeeded = 2
    static let presentationLimit = 25

    private struct Track {
        var ear: Ear, frequency: Double
        var level: Double
        var rising = true
        var lastHeard: Bool? = nil
        var heardLevels: [Double] = []
        /// Levels where the other ear was named after a miss: the tone crossed the head.
        var crossHeardLevels: [Double] = []
        var presentations = 0
        var isRetest = false
    }

    public init(plan: TestPlan, seed: UInt64) {
        self.plan = plan
        random = SeededRandom(seed: seed)
        frequencyQueue = plan.clinicalOrder
    }

    public mutating func nextTone() -> Tone? {
        if let pending { return tone(active[pending]) }
        if active.isEmpty { startNextFrequency() }
        guard !active.isEmpty else { return nil }
        let index = Int.random(in: 0..<active.count, using: &random)
        pending = index
        return tone(active[index])
    }

    private func tone(_ track: Track) -> Tone {
        Tone(ear: track.ear, frequencyHz: track.frequency, levelDBHL: track.level)
    }

    private mutating func startNextFrequency() {
        if let frequency = frequencyQueue.first {
            frequencyQueue.removeFirst()
            // From silence at the first frequency; later, from 20 dB below what this ear
            // heard at the nearest frequency already tested.
            active = plan.ears.map { ear in
                let nearest = results.nearestFound(ear, to: frequency)
                let start = nearest.map { max(TestPlan.minimumDBHL, (($0.thresholdDBHL - 20) / 5).rounded() * 5) } ?? 0
                return Track(ear: ear, frequency: frequency, level: plan.clamp(start, ear, frequency))
            }
        } else if !retestDone, plan.frequencies.contains(1000), let ear = plan.ears.first,
                  let first = results.first(where: { $0.ear == ear && $0.frequencyHz == 1000 })?.thresholdDBHL {
            retestDone = true
            var track = Track(ear: ear, frequency: 1000, level: plan.clamp(first + 10, ear, 1000))
            track.rising = false
            track.isRetest = true
            active = [track]
        }
    }

    public mutating func record(_ answer: Answer, to tone: Tone) {
        guard let index = pending else { return }
        pending = nil
        var track = active[index]
        track.presentations += 1
        let maximum = plan.maximum(track.ear, track.frequency)
        let correct = answer.detects(tone)
        if track.rising {
            if answer != .notHeard {
                // Let go: the estimate is between this level and the one before.
                track.rising = false
                track.level = plan.clamp(track.level - 5 + 10, track.ear, track.frequency)
                track.lastHeard = true
            } else if track.level >= maximum {
                return finish(index, track, threshold: nil)
            } else {
                track.level = plan.clamp(track.level + 10, track.ear, track.frequency)
            }
            active[index] = track
            return
        }
        if correct {
            if track.lastHeard == false { track.heardLevels.append(track.level) }
            track.level -= 10
        } else if answer == .notHeard {
            if track.level >= maximum && track.lastHeard == false && track.heardLevels.isEmpty {
                return finish(index, track, threshold: nil)
            }
            track.level += 5
        } else {
            if track.lastHeard == false { track.crossHeardLevels.append(track.level) }
            track.level -= 20
        }
        track.lastHeard = correct
        track.level = plan.clamp(track.level, track.ear, track.frequency)
        let needed = track.isRetest ? Self.retestAnswersNeeded : Self.answersNeeded
        if track.heardLevels.count >= needed || track.presentations >= Self.presentationLimit {
            // An ear only ever heard from the other side gets its unmasked (cross-heard) level.
            let levels = track.heardLevels.isEmpty ? track.crossHeardLevels : track.heardLevels
            let mean = levels.isEmpty ? nil : levels.reduce(0, +) / Double(levels.count)
            return finish(index, track, threshold: mean)
        }
        active[index] = track
    }

    private mutating func finish(_ index: Int, _ track: Track, threshold: Double?) {
        active.remove(at: index)
        let difference = results.record(
            track.ear, track.frequency, threshold: threshold, presentations: track.presentations, isRetest: track.isRetest, plan: plan)
        if track.isRetest { retestDifferenceDB = difference }
    }
}
