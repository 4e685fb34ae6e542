import EarshotCapture
import EarshotCore
import EarshotTestSupport
import Foundation
import Testing

@Suite struct AutomaticGainControlTests {
    let rate = 16_000.0

    func run(_ x: [Float], _ agc: AutomaticGainControl = AutomaticGainControl()) throws -> [Float] {
        try agc.prepare(ProcessSpec(sampleRate: rate, maximumBlockFrames: 512, channelCount: 1))
        let buffer = AudioBuffer(channels: [x])
        var start = 0
        while start < x.count {
            var block = buffer.block().frames(from: start, count: min(512, x.count - start))
            agc.process(&block)
            start += 512
        }
        return Array(buffer.channel(0))
    }

    func levelDB(_ x: ArraySlice<Float>) -> Double { 20 * log10(rms(x)) }

    @Test func keepsTheProcessorContract() throws {
        try expectKept(ProcessorContract(sampleRate: rate) { AutomaticGainControl() })
    }

    @Test func bringsSpeechToTheTargetWithinThreeSeconds() throws {
        for speechDBFS in [-45.0, -8.0] {
            let talk = syntheticSpeech(seconds: 10, levelDBFS: speechDBFS, seed: 3)
            let room = whiteNoise(talk.count, dbfs: speechDBFS - 40, seed: 4)
            let out = try run(zip(talk, room).map { $0 + $1 })
            // The active level of the output from 3 s on, against the target of -20 dBFS.
            let after = Array(out[Int(3 * rate)...])
            let measured = try SoundCheck(after, sampleRate: rate).report.metrics.speechLevelDBFS
            #expect(abs(measured - -20) <= 2, "speech at \(speechDBFS) dBFS came out at \(measured)")
        }
    }

    @Test func doesNotPumpTheRoomInPauses() throws {
        // Quiet speech (-40 dBFS) over a room at -75 dBFS, then eight seconds of room alone.
        let talk = syntheticSpeech(seconds: 6, levelDBFS: -40, seed: 5) + [Float](repeating: 0, count: Int(8 * rate))
        let room = whiteNoise(talk.count, dbfs: -75, seed: 6)
        let out = try run(zip(talk, room).map { $0 + $1 })
        let pause = out[Int(8 * rate)...]
        #expect(levelDB(pause) <= -50, "room tone in the pause at \(levelDB(pause)) dBFS")
        // A noisier room (-55 dBFS): the gain stops where the room would pass -50 dBFS.
        let agc = AutomaticGainControl()
        let speech = syntheticSpeech(seconds: 6, levelDBFS: -40, seed: 5)
        _ = try run(zip(speech, whiteNoise(speech.count, dbfs: -55, seed: 7)).map { $0 + $1 }, agc)
        #expect(agc.currentGainDB <= 5.5, "gain \(agc.currentGainDB) dB")
    }

    @Test func talkAfterAPauseIsNotHeldDownByAShoutBeforeIt() throws {
        // Talk at -30 dBFS with a second-long shout 12 dB over it, three seconds of room, then
        // the same talk again: it must be back at the target within its first two seconds.
        var before = syntheticSpeech(seconds: 6, levelDBFS: -30, seed: 8)
        for i in Int(3.5 * rate)..<Int(4.5 * rate) { before[i] *= 4 }
        let after = syntheticSpeech(seconds: 4, levelDBFS: -30, seed: 9)
        let talk = before + [Float](repeating: 0, count: Int(3 * rate)) + after
        let out = try run(zip(talk, whiteNoise(talk.count, dbfs: -70, seed: 10)).map { $0 + $1 })
        let resumed = Array(out[Int(11 * rate)..<Int(13 * rate)])
        let measured = try SoundCheck(resumed, sampleRate: rate).report.metrics.speechLevelDBFS
        #expect(abs(measured - -20) <= 2, "talk after the pause came out at \(measured) dBFS")
    }
}
