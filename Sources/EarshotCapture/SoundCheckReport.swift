import EarshotCore

/// What a sound check found: the JSON of `earshot soundcheck --format json`, field for field.
public struct SoundCheckReport: Codable, Equatable, Sendable {
    public enum Verdict: String, Codable, Sendable { case good, fix }

    public struct Metrics: Codable, Equatable, Sendable {
        /// Active speech level (ITU-T P.56 style), dB re full-scale RMS.
        public var speechLevelDBFS: Double
        public var peakDBFS: Double
        /// The room tone's level.
        public var noiseFloorDBFS: Double
        /// Speech against the broadband noise, between the words or, where the noise suppressor
        /// hears more of it, on them too (mains hum left out: it is its own problem).
        public var snrDB: Double
        /// Share of the speech's samples in flat tops (hard clipping).
        public var clippedShare: Double
        /// Share of the loudest peaks squeezed round (soft clipping).
        public var roundedPeakShare: Double
        /// 50 or 60 when mains hum was found.
        public var humHz: Double?
        public var bandwidthHz: Double
        /// Blind estimate from the speech's free decays; nil where too few were found.
        public var rt60Seconds: Double?
        /// Mean sample value (full scale 1).
        public var dcOffset: Double

        // Encoded with explicit nulls: the contract names every field.
        public func encode(to encoder: Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(speechLevelDBFS, forKey: .speechLevelDBFS)
            try c.encode(peakDBFS, forKey: .peakDBFS)
            try c.encode(noiseFloorDBFS, forKey: .noiseFloorDBFS)
            try c.encode(snrDB, forKey: .snrDB)
            try c.encode(clippedShare, forKey: .clippedShare)
            try c.encode(roundedPeakShare, forKey: .roundedPeakShare)
            try c.encode(humHz, forKey: .humHz)
            try c.encode(bandwidthHz, forKey: .bandwidthHz)
            try c.encode(rt60Seconds, forKey: .rt60Seconds)
            try c.encode(dcOffset, forKey: .dcOffset)
        }
    }

    public enum ProblemKind: String, Codable, SnakeCaseValue, Sendable {
        public init?(rawValue: String) {
            guard let value = Self.named(rawValue) else { return nil }
            self = value
        }

        case tooQuiet = "too_quiet", tooLoud = "too_loud", clipping, noisy, hum, narrowband, muffled, reverberant
        case dcOffset = "dc_offset", dropouts, echo
    }

    public struct Problem: Codable, Equatable, Sendable {
        public var kind: ProblemKind
        /// The measurement the problem was found on, in the unit its detail names, and the
        /// threshold it crossed (`SoundCheck.Threshold`).
        public var value: Double
        public var threshold: Double
        /// What was measured, against which threshold.
        public var detail: String
        /// One concrete thing to do about it.
        public var advice: String
    }

    public var verdict: Verdict
    public var metrics: Metrics
    public var problems: [Problem]
}
