import Foundation

/// A recording's spectrum held against read speech's: where the channel ends (bandwidth) and how
/// much of the high frequencies a covered or blocked microphone has taken away.
struct SpectrumBalance {
    /// The highest frequency the channel carries.
    let bandwidthHz: Double
    /// Level of 3–7 kHz against 1–2 kHz, relative to read speech (negative: duller). A cover takes
    /// most from the top octaves and leaves the band under them; voices differ most below 1 kHz
    /// (chest, distance to the microphone), so the reference lies above that.
    let highFrequencyBalanceDB: Double?
    static let coveredBand = 3000.0...7000.0
    static let heldBand = 1000.0...2000.0

    /// The long-term average spectrum of read speech, dB per sixth-octave band centred on
    /// 100 Hz · 2^(i/6) (100 Hz … 8 kHz), relative to the bands from 300 Hz to 1 kHz. Measured on
    /// LibriSpeech training speakers by `eval/soundcheck/speech_spectrum.py`; above 8 kHz speech
    /// is taken to fall 8 dB per octave.
    static let referenceDB: [Double] = [
        2.1, 2.7, 2.9, 2.7, 3.0, 3.7, 4.9, 4.6, 4.0, 2.4, 1.4, 1.7, 2.3, 2.2, 1.8, 1.3, -0.2, -1.6, -3.5, -5.4,
        -6.6, -7.5, -8.3, -9.4, -9.9, -11.0, -12.6, -14.0, -13.9, -14.3, -14.9, -15.6, -16.4, -16.9, -17.9, -18.9, -20.6,
    ]
    static func centreHz(_ i: Int) -> Double { 100 * pow(2, Double(i) / 6) }
    static func reference(_ i: Int) -> Double {
        i < referenceDB.count ? referenceDB[i] : referenceDB[referenceDB.count - 1] - 8 * Double(i - referenceDB.count + 1) / 6
    }

    /// A channel's edge is a cliff: this many dB down within half an octave, and nothing
    /// above coming back (a covered microphone takes 15–30 dB over an octave or more).
    static let cliffDB = 22.0
    /// …and the channel stops there: the bands above lie this far under the passband. A cover
    /// muffles by 15–30 dB and levels off, and a dull voice lies up to 10 dB or so under read
    /// speech's top octaves besides (a deep cover read at 35 dB was taken for a channel); a
    /// channel's stopband goes on down.
    static let stopbandDB = 45.0
    /// The edge itself is placed where the fall passes this many dB.
    static let edgeDB = 10.0
    /// A band is still carried within this many dB of the passband (against speech's spectrum:
    /// some voices and microphones are dull).
    static let carriedDB = 30.0

    init(_ spectrogram: PowerSpectrogram, activity: SpeechActivity) {
        let nyquist = spectrogram.sampleRate / 2
        let speech = activity.speechSpectrum(spectrogram)
        var bands: [Int] = []
        while Self.centreHz(bands.count) * pow(2, 1.0 / 12) <= nyquist { bands.append(bands.count) }
        func level(_ spectrum: [Double], _ i: Int) -> Double {
            let c = Self.centreHz(i)
            let low = spectrogram.bin(ofHz: c * pow(2, -1.0 / 12)), high = spectrogram.bin(ofHz: c * pow(2, 1.0 / 12))
            var sum = 0.0
            for k in low...high { sum += spectrum[k] }
            return Level.dB(power: sum / Double(high - low + 1))
        }
        func normalised(_ spectrum: [Double]) -> [Double] {
            let deviation = bands.map { level(spectrum, $0) - Self.reference($0) }
            let mid = bands.filter { (300...1000).contains(Self.centreHz($0)) }
            let offset = mid.map { deviation[$0] }.reduce(0, +) / Double(max(1, mid.count))
            return deviation.map { $0 - offset }
        }
        guard activity.speechPower > 0, bands.count > 12 else {
            bandwidthHz = nyquist
            highFrequencyBalanceDB = nil
            return
        }
        // Bandwidth from everything the channel carried during speech, room tone included (noise
        // that fills the top of the spectrum went through the channel too), with the loudest
        // twentieth of frames left out of each bin so a few clicks (a dropout's edges) do not
        // count as bandwidth. The channel ends at a cliff: the highest band still carried with
        // everything from half an octave above it cliffDB under it and deep in a stopband. A
        // covered microphone's loss levels off, and a clipper's distortion above a narrow channel
        // stays under the cliff's foot.
        let deviation = normalised(activity.speechSpectrum(spectrogram, trimmedShare: 0.05))
        let passband = bands.filter { (300...1500).contains(Self.centreHz($0)) }.map { deviation[$0] }.sorted()
        let passbandLevel = passband[passband.count / 2]
        var width = nyquist
        for i in bands.reversed() where Self.centreHz(i) >= 1000 && i + 3 < bands.count {
            let above = deviation[(i + 3)...].max()!
            if deviation[i] >= passbandLevel - Self.carriedDB, deviation[i] - above >= Self.cliffDB, above <= passbandLevel - Self.stopbandDB {
                // The edge: where the fall into the cliff passes edgeDB under the level the cliff
                // starts from (the loudest band in the half octave under it), so a dull voice's
                // slope under the cliff is not taken for the fall.
                let start = deviation[max(0, i - 3)...i].max()!
                var edge = i
                while edge > max(0, i - 3), Self.centreHz(edge) > 1000, deviation[edge] < start - Self.edgeDB { edge -= 1 }
                width = min(nyquist, Self.centreHz(edge) * pow(2, 1.0 / 12))
                break
            }
        }
        bandwidthHz = width
        // The balance from speech alone: the room tone taken out, but never by more than 10 dB a
        // band, so a band the noise buries reads as buried rather than as empty.
        let clean = zip(speech, activity.noiseSpectrum).map { max($0 - $1, 0.1 * $0) }
        let speechOnly = normalised(clean)
        let top = min(Self.coveredBand.upperBound, 0.9 * bandwidthHz)
        let high = bands.filter { Self.centreHz($0) >= Self.coveredBand.lowerBound && Self.centreHz($0) <= top }
        let mid = bands.filter { Self.heldBand.contains(Self.centreHz($0)) }
        if high.count >= 2 {
            let mean = { (set: [Int]) in set.map { speechOnly[$0] }.reduce(0, +) / Double(set.count) }
            highFrequencyBalanceDB = mean(high) - mean(mid)
        } else {
            highFrequencyBalanceDB = nil
        }
    }
}
