import Atomics
import Foundation

/// The consumer side of the ring between processing and an output device: it keeps the ring at
/// a target fill and resynchronises, instead of letting delay pile up or the device run dry.
///
/// Every `windowFrames` of output it looks at the least the ring held after a callback. More
/// than `targetFrames + toleranceFrames` means frames arrive faster than they are played (a
/// faster capture clock, or a backlog after the processing thread was starved): the surplus is
/// dropped. Less than half the target means the other way round: recent frames are repeated
/// to bring it back up. Either jump is crossfaded (sin²/cos², so the two weights sum to one and the
/// output never exceeds the louder of the two signals, which keeps the level ceiling). An empty
/// ring is an underrun: what is left fades out, then silence until the ring is back at its target.
///
/// Real-time safe: `play` neither allocates nor locks. One consumer thread only.
public final class ElasticPlayout: @unchecked Sendable {
    public let channelCount: Int
    public let targetFrames: Int
    public let toleranceFrames: Int
    public let windowFrames: Int
    public let crossfadeFrames: Int

    /// Callbacks that found the ring empty.
    public let underruns = ManagedAtomic<Int>(0)
    public let droppedFrames = ManagedAtomic<Int>(0)
    public let repeatedFrames = ManagedAtomic<Int>(0)
    /// Frames in the ring after the latest callback (for the latency report).
    public let lastFill = ManagedAtomic<Int>(0)

    private let ring: RingBuffer
    private let historyFrames: Int
    private let history: UnsafeMutablePointer<Float>
    private let partner: UnsafeMutablePointer<Float>
    private var priming = true
    private var leastFill = Int.max
    private var windowed = 0

    public init(ring: RingBuffer, channelCount: Int, targetFrames: Int, toleranceFrames: Int, windowFrames: Int,
                crossfadeFrames: Int, maximumCallbackFrames: Int) {
        precondition(channelCount >= 1 && targetFrames >= 0 && toleranceFrames >= 1 && windowFrames >= 1 && crossfadeFrames >= 1)
        self.ring = ring
        self.channelCount = channelCount
        self.targetFrames = targetFrames
        self.toleranceFrames = toleranceFrames
        self.windowFrames = windowFrames
        self.crossfadeFrames = crossfadeFrames
        historyFrames = max(maximumCallbackFrames, crossfadeFrames)
        history = .allocate(capacity: historyFrames * channelCount)
        history.initialize(repeating: 0, count: historyFrames * channelCount)
        partner = .allocate(capacity: crossfadeFrames * channelCount)
        partner.initialize(repeating: 0, count: crossfadeFrames * channelCount)
    }

    deinit {
        history.deallocate()
        partner.deallocate()
    }

    /// Fills `frames` interleaved frames of `output`.
    public func play(_ output: UnsafeMutablePointer<Float>, frames: Int) {
        let c = channelCount
        let fill = ring.availableToRead / c
        if priming {
            guard fill >= targetFrames + frames else {
                output.update(repeating: 0, count: frames * c)
                lastFill.store(fill, ordering: .relaxed)
                return
            }
            priming = false
            leastFill = .max
            windowed = 0
        }
        if fill < frames {
            let got = ring.read(into: UnsafeMutableBufferPointer(start: output, count: fill * c)) / c
            for i in 0..<got {  // fade out what there is
                let w = Float(got - i) / Float(got + 1)
                for k in 0..<c { output[i * c + k] *= w }
            }
            (output + got * c).update(repeating: 0, count: (frames - got) * c)
            underruns.wrappingIncrement(ordering: .relaxed)
            priming = true
            remember(output, frames: frames)
            lastFill.store(0, ordering: .relaxed)
            return
        }

        leastFill = min(leastFill, fill - frames)
        windowed += frames
        var jump = 0
        if windowed >= windowFrames {
            if leastFill > targetFrames + toleranceFrames {
                jump = max(leastFill - targetFrames, crossfadeFrames)
            } else if 2 * leastFill < targetFrames {
                jump = -min(targetFrames - leastFill, frames / 2, historyFrames)
            }
            leastFill = .max
            windowed = 0
        }

        let fade = min(crossfadeFrames, frames)
        if jump > 0 {
            // Drop: fade from where we are to `jump` frames later.
            ring.peek(into: UnsafeMutableBufferPointer(start: partner, count: fade * c))
            ring.discard(jump * c)
            ring.read(into: UnsafeMutableBufferPointer(start: output, count: frames * c))
            crossfade(from: partner, into: output, frames: fade)
            droppedFrames.wrappingIncrement(by: jump, ordering: .relaxed)
        } else if jump < 0 {
            // Repeat: fade from where we are to `-jump` frames back, into what was played.
            let back = -jump
            ring.peek(into: UnsafeMutableBufferPointer(start: partner, count: fade * c))
            output.update(from: history + (historyFrames - back) * c, count: back * c)
            ring.read(into: UnsafeMutableBufferPointer(start: output + back * c, count: (frames - back) * c))
            crossfade(from: partner, into: output, frames: fade)
            repeatedFrames.wrappingIncrement(by: back, ordering: .relaxed)
        } else {
            ring.read(into: UnsafeMutableBufferPointer(start: output, count: frames * c))
        }
        remember(output, frames: frames)
        lastFill.store(ring.availableToRead / c, ordering: .relaxed)
    }

    /// output[i] = cos² · old[i] + sin² · output[i] over the first `frames` frames.
    private func crossfade(from old: UnsafeMutablePointer<Float>, into output: UnsafeMutablePointer<Float>, frames: Int) {
        let c = channelCount
        for i in 0..<frames {
            let s = sinf(Float.pi / 2 * Float(i + 1) / Float(frames + 1))
            let w = s * s
            for k in 0..<c { output[i * c + k] = (1 - w) * old[i * c + k] + w * output[i * c + k] }
        }
    }

    /// Keeps the last `historyFrames` frames played, for repeats.
    private func remember(_ output: UnsafeMutablePointer<Float>, frames: Int) {
        let c = channelCount
        if frames >= historyFrames {
            history.update(from: output + (frames - historyFrames) * c, count: historyFrames * c)
        } else {
            history.update(from: history + frames * c, count: (historyFrames - frames) * c)
            (history + (historyFrames - frames) * c).update(from: output, count: frames * c)
        }
    }
}
