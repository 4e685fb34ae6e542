import EarshotAudiometry
import EarshotCore
import Foundation
import Testing

@Suite struct CalibrationTests {
    @Test func hearingLevelBecomesDigitalLevel() throws {
        let profile = CalibrationProfile(name: "bench", transducer: .supraAural,
                                         fullScaleSPL: [.left: [1000: 110, 125: 100], .right: [1000: 108]])
        let calibration = try Calibration(profile: profile)
        // 40 dB HL at 1 kHz on TDH 39 is 47 dB SPL; a full-scale sine gives 110 dB SPL.
        #expect(try calibration.digitalLevel(.left, atHz: 1000, levelDBHL: 40) == -63)
        #expect(try calibration.digitalLevel(.right, atHz: 1000, levelDBHL: 40) == -61)
        #expect(try calibration.maximumDBHL(.left, atHz: 1000) == 100, "the default cap")
        // At 125 Hz full scale is 100 dB SPL and RETSPL 45: only 55 dB HL can be reached.
        #expect(try calibration.maximumDBHL(.left, atHz: 125) == 55)
        #expect(throws: AudiometryError.aboveMaximum(dBHL: 105, hz: 1000, maximumDBHL: 100)) { try calibration.digitalLevel(.left, atHz: 1000, levelDBHL: 105) }
        #expect(throws: AudiometryError.notMeasured(profile: "bench", ear: .right, hz: 125)) { try calibration.digitalLevel(.right, atHz: 125, levelDBHL: 10) }
        #expect(throws: AudiometryError.self) { try calibration.digitalLevel(.left, atHz: 1234, levelDBHL: 10) }
    }

    @Test func transducerSafeMaximumBindsBelowTheCap() throws {
        let loud = CalibrationProfile(name: "loud", transducer: .insert, fullScaleSPL: [.left: [1000: 140]])
        let calibration = try Calibration(profile: loud, capDBHL: 120)
        #expect(try calibration.maximumDBHL(.left, atHz: 1000) == 120 - 5.5, "ER-3A never above 120 dB SPL")
        #expect(throws: AudiometryError.capOutOfRange(dBHL: 130)) { try Calibration(profile: loud, capDBHL: 130) }
    }

    @Test func biologicalProfileMakesTheListenersThresholdZeroHL() throws {
        let profile = try CalibrationProfile.biological(name: "me", transducer: .circumaural, thresholdsDBFS: [.left: [1000: -72, 4000: -80]])
        let calibration = try Calibration(profile: profile)
        #expect(abs(try calibration.digitalLevel(.left, atHz: 1000, levelDBHL: 0) + 72) < 1e-9)
        #expect(abs(try calibration.digitalLevel(.left, atHz: 4000, levelDBHL: 30) + 50) < 1e-9)
        #expect(profile.method == "biological")
    }

    @Test func profilesRoundTripThroughFiles() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("profile-\(UUID()).json").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let profile = CalibrationProfile(name: "x", transducer: .insert, fullScaleSPL: [.right: [500: 99.5]])
        try profile.save(path: path)
        #expect(try CalibrationProfile.load(path: path) == profile)
        try Data("{not json".utf8).write(to: URL(fileURLWithPath: path))
        #expect(throws: AudiometryError.self) { try CalibrationProfile.load(path: path) }
    }

    @Test func retsplTablesAreThePublishedOnes() throws {
        #expect(try Transducer.supraAural.retspl(atHz: 1000) == 7.0)
        #expect(try Transducer.supraAural.retspl(atHz: 125) == 45.0)
        #expect(try Transducer.insert.retspl(atHz: 1000) == 5.5)
        #expect(try Transducer.circumaural.retspl(atHz: 16_000) == 56.0)
        #expect(Transducer.insert.interauralAttenuationDB == 55 && Transducer.supraAural.interauralAttenuationDB == 40)
        for transducer in Transducer.allCases {
            #expect(AudiometricFrequencies.full.allSatisfy { transducer.referenceThresholds[$0] != nil })
        }
    }

    @Test func tonesAreRampedPerEarAndAtTheirLevel() throws {
        let channels = try ToneStimulus(frequencyHz: 1000, levelDBFS: -20, ear: .right, shape: .steady).render(sampleRate: 48_000)
        #expect(channels[0].allSatisfy { $0 == 0 }, "nothing in the other ear")
        let tone = channels[1]
        #expect(tone.count == 48_000)
        let peak = tone.map { abs($0) }.max()!
        #expect(abs(20 * log10(Double(peak)) + 20) < 0.01)
        #expect(abs(tone[0]) < 1e-6 && tone[..<240].map { abs($0) }.max()! < 0.05, "raised-cosine onset")
        let pulsed = try ToneStimulus(frequencyHz: 500, levelDBFS: -30, ear: .left).render(sampleRate: 16_000)
        #expect(pulsed[0][Int(0.3 * 16_000)] == 0, "silence between pulses")
        #expect(throws: AudiometryError.toneWouldClip(dBFS: 3)) { try ToneStimulus(frequencyHz: 1000, levelDBFS: 3, ear: .left).render(sampleRate: 48_000) }
    }
}
