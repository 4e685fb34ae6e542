import EarshotCore

/// What a hearing test, its calibration, an audiogram or the results database can refuse.
public enum AudiometryError: EarshotFailure, Equatable {
    case noReferenceThreshold(transducer: String, hz: Double, standardHz: [Double])
    case notACalibrationProfile(path: String, reason: String)
    case capOutOfRange(dBHL: Double)
    case notMeasured(profile: String, ear: Ear, hz: Double)
    case aboveMaximum(dBHL: Double, hz: Double, maximumDBHL: Double)
    case toneWouldClip(dBFS: Double)
    case toneAboveNyquist(hz: Double, sampleRate: Double)
    case repeatedFrequency
    case noEar
    case noLevelLimit(ear: Ear, hz: Double)
    case noStimulusWaiting
    case answerForAnother(answered: Int, waiting: Int)
    /// An audiogram that cannot be used; `source` names the file or request it came from.
    case audiogram(source: String?, AudiogramFault)
    case unusableResults(path: String, reason: String)
    case noPersonName
    case noStoredTest(id: Int64)
    /// A results database asked for before any test was kept in it.
    case noResults(path: String)
    /// An audiogram named by something that is neither a file nor a stored test's id.
    case notAnAudiogramOrTest(String)
    /// A calibration profile made for other earphones.
    case otherTransducer(profile: String, madeFor: String, inUse: String)
    /// The line protocol's input ended with a stimulus unanswered.
    case answersEnded(stimulus: Int)
    case notAnAnswer(line: Int, waiting: Int)
    case notAResponse(line: Int, response: String)
    /// The person stopped the test before it finished.
    case stopped

    /// What is wrong with an audiogram.
    public enum AudiogramFault: Equatable, Sendable {
        case notAnAudiogram
        case missingEar(Ear)
        case notAFrequency(Ear, String)
        case notALevel(Ear, hz: String, value: String)
        case unknownKey(String)
        case frequencyOutOfRange(Ear, hz: Double)
        case levelOutOfRange(Ear, hz: Double, dBHL: Double)
        case missingThresholds(Ear, hz: [Double])
    }

    public var description: String {
        switch self {
        case .noReferenceThreshold(let transducer, let hz, let standard):
            "\(transducer) earphones have no reference threshold at \(Int(hz)) Hz; standard frequencies are "
                + standard.map { String(Int($0)) }.joined(separator: ", ")
        case .notACalibrationProfile(let path, let reason): "\(path): not a calibration profile (\(reason))"
        case .capOutOfRange(let cap): "the output cap must be 0–120 dB HL, not \(cap)"
        case .notMeasured(let profile, let ear, let hz): "calibration '\(profile)' has no \(ear.rawValue)-ear measurement at \(Int(hz)) Hz"
        case .aboveMaximum(let level, let hz, let maximum): "\(level) dB HL at \(Int(hz)) Hz exceeds the \(maximum) dB HL this set-up may play"
        case .toneWouldClip(let level): "a tone at \(level) dBFS would clip: this set-up cannot play it"
        case .toneAboveNyquist(let hz, let rate): "\(Int(hz)) Hz cannot be played at \(Int(rate)) Hz"
        case .repeatedFrequency: "give each test frequency once"
        case .noEar: "test at least one ear"
        case .noLevelLimit(let ear, let hz): "no level limit for the \(ear.rawValue) ear at \(Int(hz)) Hz"
        case .noStimulusWaiting: "no stimulus is waiting for an answer"
        case .answerForAnother(let answered, let waiting): "answer for stimulus \(answered), but stimulus \(waiting) is waiting"
        case .audiogram(let source, let fault): (source.map { "\($0): " } ?? "") + fault.description
        case .unusableResults(let path, let reason): "\(path): not a usable results database (\(reason))"
        case .noPersonName: "a stored test needs a person's name"
        case .noStoredTest(let id): "no stored test has id \(id)"
        case .noResults(let path): "\(path): no results yet"
        case .notAnAudiogramOrTest(let reference): "\(reference): no such file, and not a stored test's id"
        case .otherTransducer(let profile, let madeFor, let inUse): "calibration '\(profile)' is for \(madeFor) earphones, not \(inUse)"
        case .answersEnded(let id): "input ended before the test finished (stimulus \(id) unanswered)"
        case .notAnAnswer(let line, let id): "input line \(line) is not an answer like {\"id\":\(id),\"response\":\"left\"}"
        case .notAResponse(let line, let response): "input line \(line): response must be \"left\", \"right\" or \"none\", not \"\(response)\""
        case .stopped: "test stopped; nothing was saved"
        }
    }
}

extension AudiometryError.AudiogramFault: CustomStringConvertible {
    static let expected = #"(expected {"left":{"250":20,…},"right":{…}})"#

    public var description: String {
        switch self {
        case .notAnAudiogram: "not an audiogram \(Self.expected)"
        case .missingEar(let ear): "no \"\(ear.rawValue)\" ear \(Self.expected)"
        case .notAFrequency(let ear, let key): "\(ear.rawValue) ear: \"\(key)\" is not a frequency in Hz"
        case .notALevel(let ear, let hz, let value): "\(ear.rawValue) ear at \(hz) Hz: \(value) is not a level in dB HL"
        case .unknownKey(let key): "unknown key \"\(key)\" (only \"left\" and \"right\")"
        case .frequencyOutOfRange(let ear, let hz): "\(ear.rawValue) ear: \(hz) Hz is outside the audiogram's 125 Hz–16 kHz"
        case .levelOutOfRange(let ear, let hz, let level): "\(ear.rawValue) ear at \(Int(hz)) Hz: \(level) dB HL is outside −10…120"
        case .missingThresholds(let ear, let hz):
            "\(ear.rawValue) ear: no threshold at \(hz.map { "\(Int($0)) Hz" }.joined(separator: ", ")) (a fitting needs 500, 1000 and 2000 Hz)"
        }
    }
}
