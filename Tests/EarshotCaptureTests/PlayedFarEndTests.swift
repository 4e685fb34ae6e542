import EarshotCapture
import Testing

struct PlayedFarEndTests {
    /// Hands `count` samples over after the loudspeaker has played `silence` in all; returns (played, reference).
    private func step(_ far: inout PlayedFarEnd, _ count: Int, silence: Int) -> ([Float], [Float]) {
        var played = [Float](repeating: -1, count: count), reference = [Float](repeating: -1, count: count)
        played.withUnsafeMutableBufferPointer { p in
            reference.withUnsafeMutableBufferPointer { r in far.next(played: p, reference: r, silencePlayed: silence) }
        }
        return (played, reference)
    }

    @Test func silenceTheLoudspeakerPlaysGoesIntoTheReferenceWhereItPlayedIt() {
        var far = PlayedFarEnd(far: (1...12).map(Float.init))
        // Silence before anything was handed over is no gap.
        var (played, reference) = step(&far, 4, silence: 300)
        #expect(played == [1, 2, 3, 4])
        #expect(reference == [1, 2, 3, 4])
        // The loudspeaker ran dry for 3 samples after sample 4: the reference carries them there.
        (played, reference) = step(&far, 4, silence: 303)
        #expect(played == [5, 6, 7, 8])
        #expect(reference == [0, 0, 0, 5])
        (played, reference) = step(&far, 4, silence: 303)
        #expect(played == [9, 10, 11, 12])
        #expect(reference == [6, 7, 8, 9])
        // Past its end the far end is silence; the reference still plays out what it holds.
        (played, reference) = step(&far, 4, silence: 303)
        #expect(played == [0, 0, 0, 0])
        #expect(reference == [10, 11, 12, 0])
        #expect(far.position == 16)
    }

    @Test func eachGapLandsWhereItWasPlayedNotWhereTheReferenceHasGot() {
        var far = PlayedFarEnd(far: (1...16).map(Float.init))
        _ = step(&far, 4, silence: 0)
        // Dry for 2 samples after sample 4, then for 1 after sample 8: the loudspeaker played
        // 1 2 3 4 0 0 5 6 7 8 0 9 10 11 12 …
        var (played, reference) = step(&far, 4, silence: 2)
        #expect(played == [5, 6, 7, 8])
        #expect(reference == [0, 0, 5, 6])
        (played, reference) = step(&far, 4, silence: 3)
        #expect(played == [9, 10, 11, 12])
        #expect(reference == [7, 8, 0, 9])
        (_, reference) = step(&far, 4, silence: 3)
        #expect(reference == [10, 11, 12, 13])
    }

    @Test func aGapLongerThanABlockSpansBlocks() {
        var far = PlayedFarEnd(far: (1...8).map(Float.init))
        _ = step(&far, 2, silence: 0)
        let (_, first) = step(&far, 2, silence: 5)
        let (_, second) = step(&far, 2, silence: 5)
        let (_, third) = step(&far, 4, silence: 5)
        #expect(first == [0, 0])
        #expect(second == [0, 0])
        #expect(third == [0, 3, 4, 5])
    }
}
