import EarshotIO
import Foundation
import Testing

/// The playout side of the live path, off-line: a producer whose clock runs fast or slow, or
/// that delivers a backlog at once, against a consumer that takes 130 frames per callback.
@Suite struct ElasticPlayoutTests {
    static let rate = 48_000.0, callback = 130

    struct Run {
        var output: [Float] = []
        var largestFill = 0
        var playout: ElasticPlayout
    }

    /// `seconds` of a 440 Hz sine at 0.5, produced at `rate × (1 + drift)`; `backlog` extra
    /// seconds of it arrive at once after 5 s.
    func run(drift: Double, seconds: Double = 60, backlog: Double = 0) -> Run {
        let ring = RingBuffer(minimumCapacity: Int(Self.rate))
        let playout = ElasticPlayout(ring: ring, channelCount: 1, targetFrames: 72, toleranceFrames: 72, windowFrames: 12_000,
                                     crossfadeFrames: 96, maximumCallbackFrames: 4 * Self.callback)
        var result = Run(playout: playout)
        var produced = 0, extra = 0
        var buffer = [Float](repeating: 0, count: Self.callback)
        func produce(upTo total: Int) {
            while produced < total {
                let count = min(total - produced, 4096)
                let chunk = (0..<count).map { Float(0.5 * sin(2 * Double.pi * 440 * Double(produced + $0) / Self.rate)) }
                chunk.withUnsafeBufferPointer { _ = ring.write($0) }
                produced += count
            }
        }
        let callbacks = Int(seconds * Self.rate) / Self.callback
        for tick in 0..<callbacks {
            // The producer keeps one callback ahead, at its own clock's pace.
            if backlog > 0, tick == Int(5 * Self.rate) / Self.callback { extra = Int(backlog * Self.rate) }
            produce(upTo: Int(Double((tick + 1) * Self.callback) * (1 + drift)) + Self.callback + extra)
            buffer.withUnsafeMutableBufferPointer { playout.play($0.baseAddress!, frames: Self.callback) }
            result.output += buffer
            if tick > Int(Self.rate) / Self.callback * 10 { result.largestFill = max(result.largestFill, ring.availableToRead) }
        }
        return result
    }

    /// No clicks: the largest step between neighbouring samples stays near the sine's own.
    func largestStep(_ x: [Float]) -> Float {
        zip(x.dropFirst(), x).map { abs($0 - $1) }.max() ?? 0
    }

    @Test(arguments: [0.001, -0.001])
    func clockDriftIsAbsorbedWithoutGrowthOrClicks(drift: Double) {
        let result = run(drift: drift)
        let playout = result.playout
        // Bounded: never more than the target, the tolerance and two callbacks in hand.
        #expect(result.largestFill <= 72 + 72 + 2 * Self.callback, "fill \(result.largestFill)")
        #expect(playout.underruns.load(ordering: .relaxed) == 0)
        if drift > 0 {
            // 1000 ppm over 60 s is 2880 surplus frames: dropped, a little at a time.
            #expect((2_000...3_200).contains(playout.droppedFrames.load(ordering: .relaxed)))
        } else {
            #expect((2_000...3_200).contains(playout.repeatedFrames.load(ordering: .relaxed)))
        }
        let sineStep = Float(0.5 * 2 * Double.pi * 440 / Self.rate)
        #expect(largestStep(Array(result.output.dropFirst(Self.callback * 2))) < 2.5 * sineStep)
        // The crossfade's weights sum to one: never louder than what went in.
        #expect(result.output.map(abs).max()! <= 0.5 + 1e-6)
    }

    @Test func aBacklogIsDroppedWithinAWindow() {
        let result = run(drift: 0, seconds: 10, backlog: 0.5)
        let dropped = result.playout.droppedFrames.load(ordering: .relaxed)
        #expect(dropped >= Int(0.5 * Self.rate) - 200 && dropped <= Int(0.5 * Self.rate) + 200, "dropped \(dropped)")
        #expect(result.largestFill <= 72 + 72 + 2 * Self.callback)
    }

    @Test func anEmptyRingIsAnUnderrunThenPlaysAgainAtTarget() {
        let ring = RingBuffer(minimumCapacity: 4096)
        let playout = ElasticPlayout(ring: ring, channelCount: 2, targetFrames: 100, toleranceFrames: 50, windowFrames: 4800,
                                     crossfadeFrames: 96, maximumCallbackFrames: 512)
        var output = [Float](repeating: 1, count: 2 * 130)
        output.withUnsafeMutableBufferPointer { playout.play($0.baseAddress!, frames: 130) }
        #expect(output.allSatisfy { $0 == 0 }, "priming: silence until the target is in hand")
        let frames = [Float](repeating: 0.25, count: 2 * 300)
        frames.withUnsafeBufferPointer { _ = ring.write($0) }
        output.withUnsafeMutableBufferPointer { playout.play($0.baseAddress!, frames: 130) }
        #expect(output.allSatisfy { $0 == 0.25 })
        output.withUnsafeMutableBufferPointer { playout.play($0.baseAddress!, frames: 130) }  // 40 frames left
        output.withUnsafeMutableBufferPointer { playout.play($0.baseAddress!, frames: 130) }
        #expect(playout.underruns.load(ordering: .relaxed) == 1)
        #expect(output[0] > 0 && output[0] < 0.25 && output[2 * 40] == 0, "what was left fades out, then silence")
    }
}
