import Foundation

/// Mains hum: narrow lines at 50 or 60 Hz and their harmonics, standing out of a long-term
/// spectrum with about 0.5 Hz resolution, where speech's moving harmonics smear into a smooth
/// floor. The mains frequency holds within a few tenths of a hertz; a motor's or a fan's lines
/// rarely sit exactly on it and its harmonics.
struct HumMeasure {
    /// 50 or 60 when lines were found.
    let fundamentalHz: Double?
    /// The lines' power together (dBFS), and how many harmonics stood out.
    let levelDBFS: Double
    let harmonics: Int

    /// A line must stand this far above the spectrum beside it.
    static let prominenceDB = 10.0
    static let wanderHz = 0.5
    static let loneProminenceDB = 20.0
    static let highestHz = 1000.0

    init(_ spectrum: PowerSpectrogram) {
        var mean = [Double](repeating: 0, count: spectrum.binCount)
        for frame in spectrum.frames {
            for k in mean.indices { mean[k] += frame[k] }
        }
        let frames = Double(max(1, spectrum.frames.count))
        mean = mean.map { $0 / frames }
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
        if let best {
            fundamentalHz = best.hz
            levelDBFS = Level.dB(power: best.power)
            harmonics = best.count
        } else {
            fundamentalHz = nil
            levelDBFS = -140
            harmonics = 0
        }
    }
}
