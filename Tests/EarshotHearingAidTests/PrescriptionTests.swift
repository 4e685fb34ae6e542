import EarshotAudiometry
import EarshotCore
import EarshotHearingAid
import Foundation
import Testing

@Suite struct PrescriptionTests {
    struct Fixture: Decodable {
        struct Listener: Decodable { var levels: [Double]; var gains: [Double] }
        var frequencies: [Double]
        var audiogramFrequencies: [Double]
        var listeners: [String: Listener]
    }

    static func fixture() throws -> Fixture {
        let url = try #require(Bundle.module.url(forResource: "nalr_pyclarity", withExtension: "json", subdirectory: "Fixtures"))
        return try JSONDecoder().decode(Fixture.self, from: Data(contentsOf: url))
    }

    static func audiogram(_ levels: [Double], at frequencies: [Double]) throws -> PureToneAudiogram {
        let ear = Dictionary(uniqueKeysWithValues: zip(frequencies, levels))
        return try PureToneAudiogram(left: ear, right: ear)
    }

    /// Bisgaard's S3: a steeply sloping loss.
    static let s3 = try! audiogram([30, 30, 35, 47.5, 60, 70, 75, 80, 80, 85], at: [250, 375, 500, 750, 1000, 1500, 2000, 3000, 4000, 6000])

    /// NAL-R as pyclarity computes it (the Clarity baseline's), for the Bisgaard audiograms and a
    /// profound loss (the 1990 revision of X): Tests/EarshotHearingAidTests/Fixtures/make_fixtures.py.
    @Test func nalRMatchesPyclarity() throws {
        let fixture = try Self.fixture()
        #expect(fixture.listeners.count == 8)
        for (name, listener) in fixture.listeners {
            let audiogram = try Self.audiogram(listener.levels, at: fixture.audiogramFrequencies)
            for (frequency, expected) in zip(fixture.frequencies, listener.gains) {
                let gain = NALR.gainDB(thresholdDBHL: audiogram.levelDBHL(.left, atHz: frequency), atHz: frequency,
                                       h500: audiogram.levelDBHL(.left, atHz: 500), h1k: audiogram.levelDBHL(.left, atHz: 1000),
                                       h2k: audiogram.levelDBHL(.left, atHz: 2000))
                #expect(abs(gain - expected) < 1e-9, "\(name) at \(Int(frequency)) Hz: \(gain) dB, pyclarity \(expected) dB")
            }
        }
    }

    @Test func nalRPrescriptionIsLinearAndWDRCBendsAroundIt() throws {
        let linear = try Prescription.fit(Self.s3, rule: .nalR)
        let wdrc = try Prescription.fit(Self.s3, rule: .wdrc)
        // Medium speech gets NAL-R's gain (what quality is judged against), and where the loss
        // is severe at most 12 dB more: 0.4 dB per dB over 50 dB HL (S3: 60 dB HL at 1 kHz,
        // 70 at 1.5 kHz, 75 at 2 kHz, 80 and more above).
        let severeExtra = [0, 0, 0, 4, 8, 10, 12, 12, 12, 12.0]
        #expect(wdrc.left.count == severeExtra.count)
        for ((l, w), extra) in zip(zip(linear.left, wdrc.left), severeExtra) {
            #expect(l.gainSoftDB == l.gainMediumDB && l.gainMediumDB == l.gainLoudDB && l.ratioSoft == 1 && l.ratioLoud == 1)
            #expect(abs(w.gainMediumDB - l.gainMediumDB - extra) < 1e-9, "\(w.centreHz) Hz")
            #expect(w.gainSoftDB >= w.gainMediumDB && w.gainMediumDB >= w.gainLoudDB)
            #expect(w.ratioSoft >= 1 && w.ratioSoft <= 3 && w.ratioLoud >= 1 && w.ratioLoud <= 3)
            #expect(w.maximumOutputDBSPL <= wdrc.maximumOutputDBSPL)
        }
        // The more loss, the more compression from soft to loud speech: 4 kHz (80 dB HL, where
        // soft speech's gain stops at the feedback limit) against 250 Hz (30 dB HL).
        let range = { (band: BandFitting) in band.gainSoftDB - band.gainLoudDB }
        #expect(range(wdrc.left[7]) > range(wdrc.left[0]) + 3, "\(range(wdrc.left[7])) dB against \(range(wdrc.left[0])) dB")
        #expect(wdrc.left[7].ratioLoud > wdrc.left[0].ratioLoud + 0.3)
        #expect(abs(wdrc.left[3].gainSoftDB - wdrc.left[3].gainMediumDB - 8) < 1e-9, "1 kHz, 60 dB HL: 8 dB more for soft speech")
        #expect(wdrc.left[5].gainSoftDB == 45, "2 kHz, 75 dB HL: soft speech's 9 dB more stops at the feedback limit")
    }

    /// Normal hearing: NAL-R's k(f) alone (+1 dB at 1–1.5 kHz), no compression.
    @Test func normalHearingGetsNoCompressionAndAtMostNALRsOffset() throws {
        let fit = try Prescription.fit(try Self.audiogram([0, 0, 0, 0, 0], at: [250, 500, 1000, 2000, 4000]))
        for band in fit.left + fit.right {
            #expect(band.gainSoftDB == band.gainMediumDB && band.gainMediumDB == band.gainLoudDB && band.ratioSoft == 1 && band.ratioLoud == 1)
            #expect(band.gainMediumDB == max(0, NALR.offset(atHz: band.centreHz)))
        }
    }

    @Test func gainsStopAtTheFeedbackLimit() throws {
        let profound = try Self.audiogram([90, 95, 100, 110, 115, 120], at: [250, 500, 1000, 2000, 4000, 6000])
        let fit = try Prescription.fit(profound)
        for band in fit.left {
            let limit = band.centreHz <= 1500 ? 55.0 : 45.0
            #expect(band.gainSoftDB <= limit && band.gainMediumDB <= limit, "\(band.centreHz) Hz")
        }
        #expect(fit.left.contains { $0.gainSoftDB == 45 })
    }

    /// A playback 6 dB louder than nominal gets every gain and ceiling 6 dB lower.
    @Test func calibrationCorrectsGainsAndCeiling() throws {
        let fit = try Prescription.fit(Self.s3, maximumOutputDBSPL: 100)
        let table = Dictionary(uniqueKeysWithValues: [250.0, 500, 1000, 2000, 4000, 8000].map { ($0, 106.0) })
        let profile = CalibrationProfile(name: "loud", transducer: .insert, fullScaleSPL: [.left: table, .right: table])
        let nominal = try fit.compression(), calibrated = try fit.compression(calibration: profile)
        for (a, b) in zip(nominal.channels[0], calibrated.channels[0]) {
            for (x, y) in zip(a.knees, b.knees) { #expect(abs(x.gainDB - 6 - y.gainDB) < 1e-9 && x.levelDBSPL == y.levelDBSPL) }
            #expect(abs(a.maximumOutputDBSPL - 6 - b.maximumOutputDBSPL) < 1e-9)
        }
        #expect(try fit.ceilingDBFS() == 0)
        #expect(abs(try fit.ceilingDBFS(calibration: profile) + 6) < 1e-9)
        #expect(throws: HearingAidError.self) { try Prescription.fit(Self.s3, maximumOutputDBSPL: .nan) }
    }

    @Test func audiogramFilesAreReadStrictly() throws {
        let good = #"{"left":{"250":20,"500":25,"1000":30,"2000":40,"4000":60},"right":{"500":10,"1000":15,"2000":20}}"#
        let audiogram = try PureToneAudiogram(json: Data(good.utf8), source: "a.json")
        #expect(audiogram.levelDBHL(.left, atHz: 4000) == 60)
        #expect(abs(audiogram.levelDBHL(.left, atHz: 3000) - (40 + 20 * log(1.5) / log(2))) < 1e-9)
        #expect(audiogram.levelDBHL(.right, atHz: 8000) == 20)
        let bad: [(String, String)] = [
            ("[1,2]", "not an audiogram"),
            (#"{"left":{"500":20,"1000":20,"2000":20}}"#, "no \"right\" ear"),
            (#"{"left":{"500":20,"1000":20},"right":{"500":20,"1000":20,"2000":20}}"#, "no threshold at 2000 Hz"),
            (#"{"left":{"500":20,"1000":130,"2000":20},"right":{"500":20,"1000":20,"2000":20}}"#, "outside −10…120"),
            (#"{"left":{"500":20,"1000":"x","2000":20},"right":{"500":20,"1000":20,"2000":20}}"#, "is not a level"),
            (#"{"left":{"low":20,"1000":20,"2000":20},"right":{"500":20,"1000":20,"2000":20}}"#, "is not a frequency"),
            (#"{"left":{"500":20,"1000":20,"2000":20,"50":10},"right":{"500":20,"1000":20,"2000":20}}"#, "outside the audiogram"),
            (#"{"left":{"500":20,"1000":20,"2000":20},"right":{"500":20,"1000":20,"2000":20},"both":{}}"#, "unknown key"),
        ]
        for (json, reason) in bad {
            do {
                _ = try PureToneAudiogram(json: Data(json.utf8), source: "a.json")
                Issue.record("accepted \(json)")
            } catch let error as AudiometryError {
                #expect(error.description.contains(reason) && error.description.contains("a.json"), "\(error.description)")
            }
        }
    }
}
