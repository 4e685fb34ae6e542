import EarshotAlerts
import EarshotCore
import EarshotIO
import Foundation
import Testing

@Suite struct SoundActivityTests {
    func detect(_ samples: [Float], sampleRate: Double, blockFrames: Int = 512) throws -> (SoundActivityDetector, [SoundEvent]) {
        var detector = SoundActivityDetector()
        let sink = MemorySink(channelCount: 1)
        try Runner(blockFrames: blockFrames).run(source: MemorySource(channels: [samples], sampleRate: sampleRate), chain: detector, sink: sink)
        detector.finish()
        #expect(sink.channels[0] == samples, "the detector passes audio through untouched")
        return (detector, detector.events)
    }

    @Test func findsWhatTheDemoScenePlaced() throws {
        let scene = DemoScene(seed: 1)
        let (detector, events) = try detect(scene.samples, sampleRate: scene.sampleRate)
        #expect(events.count == scene.placements.count, "\(events) floor \(detector.noiseFloorDBFS) placed \(scene.placements.map { $0.startSeconds })")
        #expect(abs(detector.noiseFloorDBFS - scene.backgroundDBFS) < 6)
        for (event, placed) in zip(events, scene.placements) {
            #expect(abs(event.startSeconds - placed.startSeconds) < 0.1, "\(event) vs \(placed)")
        }
        #expect(events[0].dominantFrequenciesHz.contains { abs($0 - 660) < 10 })
        #expect(events[0].dominantFrequenciesHz.contains { abs($0 - 550) < 10 })
        #expect(events[1].dominantFrequenciesHz.first.map { abs($0 - 3100) < 15 } == true)
    }

    @Test func backgroundAloneIsNotAnEvent() throws {
        let quiet = Synthesis.pinkNoise(count: 160_000, levelDBFS: -30, seed: 8)
        #expect(try detect(quiet, sampleRate: 16_000).1.isEmpty)
    }

    @Test func sameEventsInAnyBlockSize() throws {
        let scene = DemoScene(seed: 3)
        let reference = try detect(scene.samples, sampleRate: scene.sampleRate).1
        for blocks in [1, 7, 4096] {
            #expect(try detect(scene.samples, sampleRate: scene.sampleRate, blockFrames: blocks).1 == reference)
        }
    }

    @Test func scenesAreReproducibleFromTheirSeed() {
        #expect(DemoScene(seed: 5).samples == DemoScene(seed: 5).samples)
        #expect(DemoScene(seed: 5).samples != DemoScene(seed: 6).samples)
        let pink = Synthesis.pinkNoise(count: 48_000, levelDBFS: -20, seed: 2)
        let rms = (pink.reduce(0.0) { $0 + Double($1) * Double($1) } / 48_000).squareRoot()
        #expect(abs(20 * log10(rms) + 20) < 0.01)
    }
}
