import EarshotCore
import EarshotDSP
import Foundation

/// Room-acoustic parameters of an impulse response (ISO 3382-1), broadband or in one octave band.
public struct RoomParameters: Equatable, Sendable, Codable {
    /// Band centre in Hz; nil for the broadband response.
    public var bandHz: Double?
    /// Reverberation time extrapolated from the −5…−25 dB decay; nil when the decay is too short.
    public var t20: Double?
    /// From the −5…−35 dB decay.
    public var t30: Double?
    /// Early decay time, from the 0…−10 dB decay.
    public var edt: Double?
    /// Clarity: early (first 50 / 80 ms) over late energy, dB.
    public var c50: Double?
    public var c80: Double?
    /// Direct-to-reverberant ratio: the ±2.5 ms around the direct sound over the rest, dB.
    public var drr: Double?
}

public enum RoomAnalysis {
    /// The octave bands analysed, those at least an octave below Nyquist.
    public static func octaveBands(sampleRate: Double) -> [Double] {
        [63, 125, 250, 500, 1000, 2000, 4000, 8000, 16_000].filter { $0 * 2.0.squareRoot() < sampleRate / 2 * 0.9 }
    }

    /// Broadband parameters first, then one set per octave band.
    public static func analyze(_ response: [Float], sampleRate: Double) throws -> [RoomParameters] {
        try EarshotError.validate(sampleRate: sampleRate)
        guard response.contains(where: { $0 != 0 }) else {
            throw RoomError.silentImpulseResponse
        }
        let onset = directSoundIndex(response)
        var results = [parameters(response, onset: onset, sampleRate: sampleRate, band: nil)]
        for band in octaveBands(sampleRate: sampleRate) {
            results.append(parameters(octaveFiltered(response, centerHz: band, sampleRate: sampleRate), onset: onset, sampleRate: sampleRate, band: band))
        }
        return results
    }

    /// The direct sound: where the response first comes within 20 dB of its peak (ISO 3382-1).
    static func directSoundIndex(_ h: [Float]) -> Int {
        let peak = h.map { abs($0) }.max() ?? 0
        return h.firstIndex { abs($0) >= peak * 0.1 } ?? 0
    }

    /// A zero-phase octave band: fourth-order high- and low-pass edges a half octave either
    /// side of the centre, run forwards then backwards so the decay is not skewed in time.
    static func octaveFiltered(_ h: [Float], centerHz: Double, sampleRate: Double) -> [Float] {
        let low = centerHz / 2.0.squareRoot(), high = centerHz * 2.0.squareRoot()
        let q = 1 / 2.0.squareRoot()
        var sections = [BiquadCoefficients(.highPass, frequencyHz: low, q: q, sampleRate: sampleRate),
                        BiquadCoefficients(.highPass, frequencyHz: low, q: q, sampleRate: sampleRate)]
        if high < sampleRate / 2 * 0.95 {
            sections += [BiquadCoefficients(.lowPass, frequencyHz: high, q: q, sampleRate: sampleRate),
                         BiquadCoefficients(.lowPass, frequencyHz: high, q: q, sampleRate: sampleRate)]
        }
        return BiquadFilter(sections: sections).zeroPhase(h, sampleRate: sampleRate)
    }

    static func parameters(_ h: [Float], onset: Int, sampleRate: Double, band: Double?) -> RoomParameters {
        let energy = h.map { Double($0) * Double($0) }
        let end = truncationIndex(energy, onset: onset, sampleRate: sampleRate)
        // Schroeder backward integration, in dB relative to the total.
        var decay = [Double](repeating: 0, count: end - onset)
        var sum = 0.0
        for i in stride(from: end - 1, through: onset, by: -1) {
            sum += energy[i]
            decay[i - onset] = sum
        }
        let total = decay.first ?? 0
        let decayDB = decay.map { total > 0 && $0 > 0 ? 10 * log10($0 / total) : -.infinity }

        func reverberationTime(from top: Double, to bottom: Double) -> Double? {
            guard let first = decayDB.firstIndex(where: { $0 <= top }),
                  let last = decayDB.firstIndex(where: { $0 <= bottom }), last > first + 2 else { return nil }
            // Least-squares line through the decay between the two levels; time to fall 60 dB.
            let n = Double(last - first + 1)
            var sx = 0.0, sy = 0.0, sxx = 0.0, sxy = 0.0
            for i in first...last {
                let t = Double(i) / sampleRate
                sx += t; sy += decayDB[i]; sxx += t * t; sxy += t * decayDB[i]
            }
            let slope = (n * sxy - sx * sy) / (n * sxx - sx * sx)
            return slope < 0 ? -60 / slope : nil
        }
        func ratio(split seconds: Double, from start: Int) -> Double? {
            let cut = min(end, start + Int(seconds * sampleRate))
            let early = energy[start..<cut].reduce(0, +), late = energy[cut..<end].reduce(0, +)
            return early > 0 && late > 0 ? 10 * log10(early / late) : nil
        }
        let directStart = max(0, onset - Int(0.0025 * sampleRate))
        let directEnd = min(end, onset + Int(0.0025 * sampleRate))
        let direct = energy[directStart..<directEnd].reduce(0, +)
        let reverberant = energy[directEnd..<end].reduce(0, +)
        func rounded(_ x: Double?, _ places: Double) -> Double? { x.map { ($0 * places).rounded() / places } }
        return RoomParameters(
            bandHz: band,
            t20: rounded(reverberationTime(from: -5, to: -25), 1000),
            t30: rounded(reverberationTime(from: -5, to: -35), 1000),
            edt: rounded(reverberationTime(from: 0, to: -10), 1000),
            c50: rounded(ratio(split: 0.05, from: onset), 100),
            c80: rounded(ratio(split: 0.08, from: onset), 100),
            drr: rounded(direct > 0 && reverberant > 0 ? 10 * log10(direct / reverberant) : nil, 100))
    }

    /// Where the decay meets the noise floor: the floor is the mean energy of the last tenth;
    /// the response is cut where its 10 ms envelope first falls within 5 dB of it. A response
    /// that decays to its very end (no floor) is kept whole.
    static func truncationIndex(_ energy: [Double], onset: Int, sampleRate: Double) -> Int {
        let tail = energy.count / 10
        guard tail > 0 else { return energy.count }
        let noise = energy[(energy.count - tail)...].reduce(0, +) / Double(tail)
        let window = max(1, Int(0.01 * sampleRate))
        var envelope = 0.0
        var position = onset
        while position + window <= energy.count - tail {
            envelope = energy[position..<(position + window)].reduce(0, +) / Double(window)
            if noise > 0 && envelope <= noise * pow(10, 0.5) {
                // Only a floor if the tail is really flat: compare the two halves of the last tenth.
                let half = tail / 2
                let a = energy[(energy.count - tail)..<(energy.count - tail + half)].reduce(0, +)
                let b = energy[(energy.count - half)...].reduce(0, +)
                if b > 0 && a / b < 2 { return max(position, onset + window) }
                return energy.count
            }
            position += window
        }
        return energy.count
    }
}
