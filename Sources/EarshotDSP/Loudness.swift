import EarshotCore
import Foundation

/// Programme loudness after ITU-R BS.1770-4: K-weighting, 400 ms blocks with 75 % overlap,
/// an absolute gate at −70 LUFS and a relative gate 10 LU below the ungated level.
public enum Loudness {
    /// The K-weighting pre-filter (a high shelf, then the RLB high-pass) for any sample rate.
    /// The analogue parameters, mapped by the bilinear transform, reproduce the 48 kHz
    /// coefficients BS.1770 publishes (the derivation libebur128 uses).
    public static func kWeighting(sampleRate: Double) -> BiquadFilter {
        let shelfK = tan(Double.pi * 1681.974450955533 / sampleRate), shelfQ = 0.7071752369554196
        let vh = pow(10, 3.999843853973347 / 20), vb = pow(vh, 0.4996667741545416)
        let shelfA0 = 1 + shelfK / shelfQ + shelfK * shelfK
        let shelf = BiquadCoefficients(
            b0: (vh + vb * shelfK / shelfQ + shelfK * shelfK) / shelfA0,
            b1: 2 * (shelfK * shelfK - vh) / shelfA0,
            b2: (vh - vb * shelfK / shelfQ + shelfK * shelfK) / shelfA0,
            a1: 2 * (shelfK * shelfK - 1) / shelfA0,
            a2: (1 - shelfK / shelfQ + shelfK * shelfK) / shelfA0)
        let passK = tan(Double.pi * 38.13547087602444 / sampleRate), passQ = 0.5003270373238773
        let passA0 = 1 + passK / passQ + passK * passK
        let highPass = BiquadCoefficients(
            b0: 1, b1: -2, b2: 1,
            a1: 2 * (passK * passK - 1) / passA0,
            a2: (1 - passK / passQ + passK * passK) / passA0)
        return BiquadFilter(sections: [shelf, highPass])
    }

    /// Integrated loudness in LUFS of planar channels (left, right, centre weigh 1; this
    /// treats every channel so). nil when everything is gated away (silence, or too short
    /// for one 400 ms block).
    public static func integrated(_ channels: [[Float]], sampleRate: Double) -> Double? {
        guard let length = channels.first?.count else { return nil }
        let blockLength = Int(0.4 * sampleRate), step = Int(0.1 * sampleRate)
        guard length >= blockLength, step > 0 else { return nil }
        // Per channel: K-weighted squares, summed per 100 ms step so blocks are four steps.
        let stepCount = length / step
        var stepEnergy = [Double](repeating: 0, count: stepCount)
        for channel in channels {
            let filter = kWeighting(sampleRate: sampleRate)
            let buffer = AudioBuffer(channels: [channel])
            try? filter.prepare(ProcessSpec(sampleRate: sampleRate, maximumBlockFrames: length, channelCount: 1))
            var block = buffer.block()
            filter.process(&block)
            let weighted = buffer.channel(0)
            for s in 0..<stepCount {
                var sum = 0.0
                for i in (s * step)..<((s + 1) * step) { sum += Double(weighted[i]) * Double(weighted[i]) }
                stepEnergy[s] += sum
            }
        }
        let stepsPerBlock = blockLength / step
        guard stepCount >= stepsPerBlock else { return nil }
        let blocks = (0...(stepCount - stepsPerBlock)).map { start in
            stepEnergy[start..<(start + stepsPerBlock)].reduce(0, +) / Double(stepsPerBlock * step)
        }
        func lufs(_ meanSquare: Double) -> Double { -0.691 + 10 * log10(meanSquare) }
        let absolute = blocks.filter { $0 > 0 && lufs($0) > -70 }
        guard !absolute.isEmpty else { return nil }
        let relativeGate = lufs(absolute.reduce(0, +) / Double(absolute.count)) - 10
        let gated = absolute.filter { lufs($0) > relativeGate }
        guard !gated.isEmpty else { return nil }
        return lufs(gated.reduce(0, +) / Double(gated.count))
    }
}
