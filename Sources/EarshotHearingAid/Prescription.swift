import EarshotAudiometry
import EarshotCore
import EarshotEnhance
import Foundation

/// How gains are prescribed from an audiogram.
public enum PrescriptionRule: String, Codable, SnakeCaseValue, Sendable {
    public init?(rawValue: String) {
        guard let value = Self.named(rawValue) else { return nil }
        self = value
    }

    /// NAL-R, linear: the same gain at every input level.
    case nalR = "nal_r"
    /// Earshot's wide dynamic range compression rule, anchored on NAL-R for average speech.
    case wdrc

    /// The rule's name as every output prints it.
    public var name: String {
        switch self {
        case .nalR: "NAL-R (linear)"
        case .wdrc: "Earshot WDRC (compression, NAL-R for average speech)"
        }
    }
}

/// One band of one ear's fitting.
public struct BandFitting: Codable, Equatable, Sendable {
    public var centreHz: Double
    public var thresholdDBHL: Double
    /// Insertion gain for speech at 50, 65 and 80 dB SPL.
    public var gainSoftDB: Double
    public var gainMediumDB: Double
    public var gainLoudDB: Double
    /// Where compression begins: the band level of 50 dB SPL speech; linear gain below.
    public var kneeDBSPL: Double
    /// Compression ratios from soft to medium speech and from medium speech up.
    public var ratioSoft: Double
    public var ratioLoud: Double
    /// The band's output never exceeds this.
    public var maximumOutputDBSPL: Double

    enum CodingKeys: String, CodingKey {
        case centreHz, thresholdDBHL, gainSoftDB = "gain50DB", gainMediumDB = "gain65DB", gainLoudDB = "gain80DB", kneeDBSPL
        case ratioSoft = "ratioSoftToMedium", ratioLoud = "ratioAboveMedium", maximumOutputDBSPL
    }
}

/// A hearing-aid fitting for both ears.
public struct Fitting: Codable, Equatable, Sendable {
    public var rule: PrescriptionRule
    /// The most the aid ever plays, dB SPL (sample peak, as a full-scale sine's level).
    public var maximumOutputDBSPL: Double
    public var left: [BandFitting]
    public var right: [BandFitting]

    public func bands(_ ear: Ear) -> [BandFitting] { ear == .left ? left : right }

    /// The compressor that realises this fitting, left ear on channel 0, right on channel 1.
    /// Levels and gains are in the input's scale (a full-scale sine at `fullScaleDBSPL`); with
    /// `calibration`, the playback's measured level per ear and frequency corrects each band's
    /// gain and ceiling so that what reaches the ear is what was prescribed. Its output is
    /// limited at `ceilingDBFS`.
    public func compression(fullScaleDBSPL: Double = Prescription.defaultFullScaleDBSPL, calibration: CalibrationProfile? = nil,
                            attackSeconds: Double = Prescription.attackSeconds, releaseSeconds: Double = Prescription.releaseSeconds) throws -> Compression {
        let channels = try [Ear.left, .right].map { ear in
            try bands(ear).enumerated().map { index, band -> CompressionBand in
                let correction = fullScaleDBSPL - (try Prescription.playbackFullScale(calibration, ear: ear, atHz: band.centreHz) ?? fullScaleDBSPL)
                let share = Prescription.speechBandShareDB[index]
                return CompressionBand(
                    centreHz: band.centreHz,
                    knees: [(50 + share, band.gainSoftDB + correction), (65 + share, band.gainMediumDB + correction), (80 + share, band.gainLoudDB + correction)],
                    maximumOutputDBSPL: band.maximumOutputDBSPL + correction)
            }
        }
        return Compression(channels: channels, fullScaleDBSPL: fullScaleDBSPL, attackSeconds: attackSeconds, releaseSeconds: releaseSeconds,
                           limitDBFS: try ceilingDBFS(fullScaleDBSPL: fullScaleDBSPL, calibration: calibration),
                           limiterSplitHz: [Ear.left, .right].map { limiterSplitHz(bands($0)) })
    }

    /// Where an ear's output limiter splits the output: below the first band whose loss is
    /// moderately severe (`Prescription.limitedLossDBHL`), halfway in log frequency, when some
    /// band lies below it. The peaks that reach the ceiling come from the gain a sloping loss
    /// needs at those frequencies, so the limiter takes what it must from them first and leaves
    /// the frequencies the listener hears better unpumped; a loss that is as severe from the
    /// lowest band up is limited as a whole.
    private func limiterSplitHz(_ bands: [BandFitting]) -> Double? {
        guard let first = bands.firstIndex(where: { $0.thresholdDBHL >= Prescription.limitedLossDBHL }), first > 0 else { return nil }
        return (bands[first - 1].centreHz * bands[first].centreHz).squareRoot()
    }

    /// The output guard's ceiling in dBFS: no sample may play louder than the maximum output on
    /// the loudest band of the playback (a full-scale sine at `fullScaleDBSPL` without a profile).
    public func ceilingDBFS(fullScaleDBSPL: Double = Prescription.defaultFullScaleDBSPL, calibration: CalibrationProfile? = nil) throws -> Double {
        min(0, maximumOutputDBSPL - (try loudestFullScaleDBSPL(fullScaleDBSPL: fullScaleDBSPL, calibration: calibration)))
    }

    /// How far the maximum output lies above what the playback can play (its full scale on the
    /// loudest band), dB; 0 when it can be reached. Above, the output is limited at full scale.
    public func unreachableOutputDB(fullScaleDBSPL: Double = Prescription.defaultFullScaleDBSPL, calibration: CalibrationProfile? = nil) throws -> Double {
        max(0, maximumOutputDBSPL - (try loudestFullScaleDBSPL(fullScaleDBSPL: fullScaleDBSPL, calibration: calibration)))
    }

    /// A full-scale sine's dB SPL on the playback's loudest band.
    private func loudestFullScaleDBSPL(fullScaleDBSPL: Double, calibration: CalibrationProfile?) throws -> Double {
        guard let calibration else { return fullScaleDBSPL }
        var loudest = -Double.infinity
        for ear in [Ear.left, .right] {
            for band in bands(ear) { loudest = max(loudest, try Prescription.playbackFullScale(calibration, ear: ear, atHz: band.centreHz)!) }
        }
        return loudest
    }

    /// The one line to say when the maximum output cannot be reached, or nil; `limitDBFS` is
    /// where the output is limited instead.
    public func unreachableOutputNote(calibration: CalibrationProfile?, limitDBFS: Double) throws -> String? {
        let shortfall = try unreachableOutputDB(calibration: calibration)
        guard shortfall > 0 else { return nil }
        let playback = calibration.map { "calibration '\($0.name)'" } ?? "an uncalibrated playback (a full-scale sine is \(Int(Prescription.defaultFullScaleDBSPL)) dB SPL)"
        return String(format: "the maximum output, %.0f dB SPL, is %.1f dB above what %@ can play: the output is limited at %.1f dBFS instead",
                      maximumOutputDBSPL, shortfall, playback, limitDBFS)
    }
}

/// Gains from an audiogram.
///
/// **NAL-R** (`nal_r`) is the published linear rule (Byrne & Dillon 1986; `NALR`): it aims to
/// make every band of average conversational speech equally loud, at the listener's most
/// comfortable level. It gives the same gain at every level, so soft speech stays partly
/// inaudible for larger losses and loud speech gets too loud.
///
/// **Earshot's WDRC rule** (`wdrc`) keeps NAL-R where it was validated and bends the gain away
/// from it for softer and louder speech, by how much each band has lost:
/// - *Medium speech* (65 dB SPL): NAL-R's gain, and where a band's loss is severe (NAL-R was
///   fitted to mild and moderate losses) more, `severeExtra(HL)` = 0.4 dB per dB above 50 dB HL,
///   at most 12 dB. Chosen on the development set of `make eval-amplify`: with the output
///   limited in two bands (`Fitting.limiterSplitHz`), 0.2 dB per dB (at most 6) raised HASPI for
///   N4, S2 and S3 by 0.010–0.018 over a quarter of it and left S3's HASQI where it was; twice
///   that raised the mean HASPI of all seven listeners from 0.887 to 0.894 (S2 0.867 → 0.893,
///   S3 0.842 → 0.858) with HASQI within 0.003 of where it was (S3 0.247, the baseline's 0.122);
///   0.5 dB per dB (at most 15), or 0.3 from 40 dB HL, 0.001 more. With the whole output limited
///   at once even 0.2 dB per dB had put S3's HASQI at 0.087, and a quarter of it shipped then.
/// - *Soft speech* (50 dB SPL): more gain again, `softExtra(HL)` = 0.2 dB per dB of loss above
///   20 dB HL, at most 9 dB. A cochlear loss raises the threshold far more than it raises the
///   level of discomfort (loudness recruitment), so soft sounds need more help than loud ones;
///   restoring full audibility would need ratios beyond 3:1, which smear the envelope that
///   carries speech cues, so only part of the lost audibility is given back.
/// - *Loud speech* (80 dB SPL): less gain, `loudCut(HL)` = 0.1 dB per dB above 20 dB HL, at
///   most 5 dB: recruitment makes loud sounds nearly normally loud already.
/// - *Knees and ratios* follow: linear below the band level of 50 dB SPL speech (the knee
///   point), then 15 / (15 − softExtra) up to 65 dB SPL speech (1.4:1 at 40 dB HL, 2.5:1 from
///   65 dB HL) and 15 / (15 − loudCut) above (at most 1.5:1). Band levels of whole-speech levels
///   come from the long-term average speech spectrum measured on LibriSpeech
///   (`speechBandShareDB`, `eval/amplify/ltass.py`).
/// - *Limits.* Each band's output stays under the listener's estimated discomfort level (100 dB
///   SPL up to 50 dB HL, then half a dB per dB of loss; Pascoe 1988 reports that loudness
///   discomfort rises about this much with cochlear loss) and under the maximum output. Gains
///   stop at 55 dB up to 1.5 kHz and 45 dB above, where feedback paths of earmoulds are
///   strongest, so the prescription itself never asks for a gain that whistles.
/// - *Time constants.* Attack 5 ms (a consonant's onset is caught), release 0.5 s: slow-acting,
///   so the gain does not pump up the noise between syllables. Measured on the development set
///   of `make eval-amplify`, a 0.1 s release lost HASPI in noise at +5 dB against the Clarity
///   baseline; 0.25 s and 0.5 s did not (HASPI at +5 dB: 0.731, 0.746, 0.752; baseline 0.749).
public enum Prescription {
    public static let defaultFullScaleDBSPL = 100.0
    /// The loss at which the output limiter's upper band begins (the WHO's "moderately
    /// severe", 50 dB HL): see `Fitting.limiterSplitHz`.
    public static let limitedLossDBHL = 50.0
    public static let attackSeconds = 0.005
    public static let releaseSeconds = 0.5
    /// The compressor's band centres (the audiometric frequencies NAL-R is defined at, and 8 kHz).
    public static let bandCentresHz: [Double] = [250, 500, 750, 1000, 1500, 2000, 3000, 4000, 6000, 8000]
    /// Each band's share of whole speech's level, dB (bands split halfway in log frequency;
    /// the top one runs to the Nyquist frequency): `eval/amplify/ltass.py`.
    public static let speechBandShareDB: [Double] = [-2.7, -6.6, -10.3, -13.5, -15.0, -16.6, -17.3, -18.6, -20.1, -25.2]

    static func severeExtraDB(_ loss: Double) -> Double { min(12, max(0, 0.4 * (loss - 50))) }
    static func softExtraDB(_ loss: Double) -> Double { min(9, max(0, 0.2 * (loss - 20))) }
    static func loudCutDB(_ loss: Double) -> Double { min(5, max(0, 0.1 * (loss - 20))) }
    static func discomfortDBSPL(_ loss: Double) -> Double { 100 + 0.5 * max(0, loss - 50) }
    static func feedbackLimitDB(atHz frequency: Double) -> Double { frequency <= 1500 ? 55 : 45 }

    public static func fit(_ audiogram: PureToneAudiogram, rule: PrescriptionRule = .wdrc, maximumOutputDBSPL: Double = 100) throws -> Fitting {
        guard maximumOutputDBSPL.isFinite, (60...140).contains(maximumOutputDBSPL) else {
            throw HearingAidError.maximumOutput(dBSPL: maximumOutputDBSPL)
        }
        func ear(_ ear: Ear) -> [BandFitting] {
            let h500 = audiogram.levelDBHL(ear, atHz: 500), h1k = audiogram.levelDBHL(ear, atHz: 1000), h2k = audiogram.levelDBHL(ear, atHz: 2000)
            return zip(bandCentresHz, speechBandShareDB).map { centre, share in
                let loss = audiogram.levelDBHL(ear, atHz: centre)
                let limit = feedbackLimitDB(atHz: centre)
                let nalR = NALR.gainDB(thresholdDBHL: loss, atHz: centre, h500: h500, h1k: h1k, h2k: h2k)
                let medium = min(limit, nalR + (rule == .wdrc ? severeExtraDB(loss) : 0))
                let soft = rule == .wdrc ? min(limit, medium + softExtraDB(loss)) : medium
                let loud = rule == .wdrc ? max(0, medium - loudCutDB(loss)) : medium
                return BandFitting(
                    centreHz: centre, thresholdDBHL: loss, gainSoftDB: soft, gainMediumDB: medium, gainLoudDB: loud,
                    kneeDBSPL: 50 + share, ratioSoft: 15 / (15 - (soft - medium)), ratioLoud: 15 / (15 - (medium - loud)),
                    maximumOutputDBSPL: min(maximumOutputDBSPL, discomfortDBSPL(loss)))
            }
        }
        return Fitting(rule: rule, maximumOutputDBSPL: maximumOutputDBSPL, left: ear(.left), right: ear(.right))
    }

    /// The playback's dB SPL for a full-scale sine in `ear` at `frequency`, from the profile's
    /// measured frequencies (linear in log frequency, nearest beyond); nil without a profile.
    static func playbackFullScale(_ profile: CalibrationProfile?, ear: Ear, atHz frequency: Double) throws -> Double? {
        guard let profile else { return nil }
        let table = Dictionary((profile.fullScaleSPL[ear] ?? [:]).compactMap { key, value in Double(key).map { ($0, value) } }, uniquingKeysWith: { a, _ in a })
        guard let level = LogFrequency.interpolate(table, atHz: frequency) else {
            throw HearingAidError.notCalibrated(profile: profile.name, ear: ear)
        }
        return level
    }
}
