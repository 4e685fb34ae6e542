import EarshotDSP
import Foundation

/// Mains hum: narrow lines at 50 or 60 Hz and their harmonics, standing out of a long-term
/// spectrum with about 0.5 Hz resolution, where speech's moving harmonics smear into a smooth
/// floor. The mains frequency holds within a few tenths of a hertz; a motor's or a fan's lines
/// rarely sit exactly on it and its harmonics.
struct HumMeasure {
    /// 50 or 60 when lines were found.
    let fundamentalHz: Double?
    /// The lines' power together (dBFS), and how many lines (the fundamental and its harmonics)
    /// stood out in the pauses.
    let levelDBFS: Double
    let lines: Int

    /// A line must stand this far above the spectrum beside it.
    static let prominenceDB = 10.0
    static let wanderHz = 0.5
    static let loneProminenceDB = 20.0
    static let highestHz = 1000.0
    /// A line in the pauses, where nothing masks it, need stand out only this far.
    static let pauseProminenceDB = 6.0

    /// `spectrum`: long frames (about 0.5 Hz apart) that find the lines; `pauses`: shorter ones
    /// (about 2 Hz apart) in which their level is measured.
    init(_ spectrum: PowerSpectrogram, pauses: PowerSpectrogram) {
        let mean = spectrum.mean(of: spectrum.frames.indices)
        var best: (hz: Double, power: Double, count: Int)? = nil
        for fundamental in [50.0, 60.0] {
            var power = 0.0, count = 0, strongFundamental = false
            var h = 1
            while Double(h) * fundamental <= min(Self.highestHz, spectrum.sampleRate / 2 - 30) {
                let hz = Double(h) * fundamental
                h += 1
                let centre = spectrum.bin(ofHz: hz), reach = max(1, Int((Self.wanderHz / spectrum.binHz).rounded()))
                var peak = centre
                for k in (centre - reach)...(centre + reach) where mean[k] > mean[peak] { peak = k }
                var beside: [Double] = []
                for k in spectrum.bin(ofHz: hz - 20)...spectrum.bin(ofHz: hz - 6) { beside.append(mean[k]) }
                for k in spectrum.bin(ofHz: hz + 6)...spectrum.bin(ofHz: hz + 20) { beside.append(mean[k]) }
                beside.sort()
                let floor = beside[beside.count / 2]
                guard floor > 0 ? mean[peak] > floor * pow(10, Self.prominenceDB / 10) : mean[peak] > 1e-14 else { continue }
                // A Hann line spreads over its peak and two bins either side.
                var line = 0.0
                for k in max(0, peak - 2)...min(mean.count - 1, peak + 2) { line += max(0, mean[k] - floor) }
                power += line
                count += 1
                if hz == fundamental, mean[peak] > floor * pow(10, Self.loneProminenceDB / 10) { strongFundamental = true }
            }
            // Hum is a series of lines, or a fundamental that towers over its surroundings: speech
            // masks the harmonics of a hum that is plainly audible in the pauses.
            if count >= 2 || strongFundamental, best == nil || power > best!.power { best = (fundamental, power, count) }
        }
        guard let best else {
            fundamentalHz = nil
            levelDBFS = -140
            lines = 0
            return
        }
        fundamentalHz = best.hz
        // Its level is read in the pauses, where it is heard: there speech hides none of its
        // harmonics, and a buzz rich in them counts for more than a lone low line.
        let quiet = Self.quietestMean(pauses)
        var power = 0.0, count = 0
        var hz = best.hz
        while hz <= min(Self.highestHz, pauses.sampleRate / 2 - 30) {
            let centre = pauses.bin(ofHz: hz)
            var beside: [Double] = []
            for k in pauses.bin(ofHz: hz - 25)...pauses.bin(ofHz: hz - 8) { beside.append(quiet[k]) }
            for k in pauses.bin(ofHz: hz + 8)...pauses.bin(ofHz: hz + 25) { beside.append(quiet[k]) }
            beside.sort()
            let floor = beside[beside.count / 2]
            let peak = quiet[max(0, centre - 1)...min(quiet.count - 1, centre + 1)].max() ?? 0
            if peak > floor * pow(10, Self.pauseProminenceDB / 10) {
                for k in max(0, centre - 3)...min(quiet.count - 1, centre + 3) { power += max(0, quiet[k] - floor) }
                count += 1
            }
            hz += best.hz
        }
        levelDBFS = Level.dB(power: power)
        lines = count
    }

    /// Whether the hum is loud enough to report beside speech at `speech` dBFS.
    func isAudible(besideSpeechDBFS speech: Double) -> Bool {
        fundamentalHz != nil && levelDBFS >= SoundCheck.Threshold.humDBFS
            && levelDBFS >= speech - SoundCheck.Threshold.humBelowSpeechDB
    }

    /// `signal` (at `sampleRate`) with the lines notched out, from the fundamental up to
    /// `highestHz`, each about 2 Hz wide, forwards and backwards so that nothing moves in time.
    /// Offline only.
    func notched(_ signal: [Float], sampleRate: Double) -> [Float] {
        guard let fundamentalHz else { return signal }
        let lines = stride(from: fundamentalHz, through: min(Self.highestHz, sampleRate / 2 - 1), by: fundamentalHz)
        let sections = lines.map { BiquadCoefficients(.notch, frequencyHz: $0, q: $0 / Self.notchWidthHz, sampleRate: sampleRate) }
        return BiquadFilter(sections: sections).zeroPhase(signal, sampleRate: sampleRate)
    }

    static let notchWidthHz = 2.0

    /// The mean spectrum of the quietest fifth of the frames: the pauses between words.
    static func quietestMean(_ spectrum: PowerSpectrogram) -> [Double] {
        let energies = spectrum.frames.map { $0.reduce(0, +) }
        let order = energies.indices.sorted { energies[$0] < energies[$1] }
        return spectrum.mean(of: order.prefix(max(1, order.count / 5)))
    }
}
