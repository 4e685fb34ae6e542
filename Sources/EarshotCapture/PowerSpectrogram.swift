import EarshotDSP
import Foundation

/// Short-time power spectra of a whole recording (Hann frames), scaled so that a frame's bins
/// sum to the mean square of the signal under it: levels read off it are dBFS directly.
struct PowerSpectrogram {
    let sampleRate: Double
    let frameSize: Int
    let hop: Int
    /// `frames[t][k]`: power of bin k in frame t.
    let frames: [[Double]]

    var binCount: Int { frameSize / 2 + 1 }
    var binHz: Double { sampleRate / Double(frameSize) }
    var hopSeconds: Double { Double(hop) / sampleRate }

    init(_ signal: [Float], sampleRate: Double, frameSeconds: Double, hopSeconds: Double) {
        self.sampleRate = sampleRate
        var size = 16
        while Double(size) < frameSeconds * sampleRate { size *= 2 }
        frameSize = size
        hop = max(1, Int((hopSeconds * sampleRate).rounded()))
        let window = Window.hann.coefficients(count: size)
        let windowEnergy = window.reduce(0) { $0 + Double($1) * Double($1) }
        let fft = RealFFT(size: size, planning: .estimate)
        var frames: [[Double]] = []
        var start = 0
        while start + size <= max(signal.count, size) {
            for n in 0..<size {
                let index = start + n
                fft.time[n] = index < signal.count ? signal[index] * window[n] : 0
            }
            fft.forward()
            var power = [Double](repeating: 0, count: size / 2 + 1)
            for k in 0..<power.count {
                let weight = (k == 0 || k == size / 2) ? 1.0 : 2.0
                power[k] = weight * Double(fft.power(bin: k)) / (Double(size) * windowEnergy)
            }
            frames.append(power)
            start += hop
        }
        self.frames = frames
    }

    /// One frame, the mean of all of them, in the same bins.
    private init(averaging spectrogram: PowerSpectrogram) {
        sampleRate = spectrogram.sampleRate
        frameSize = spectrogram.frameSize
        hop = spectrogram.hop
        frames = [spectrogram.mean(of: spectrogram.frames.indices)]
    }

    /// The mean power per bin over the frames at `chosen`.
    func mean(of chosen: some Collection<Int>) -> [Double] {
        var sum = [Double](repeating: 0, count: binCount)
        for t in chosen {
            for k in sum.indices { sum[k] += frames[t][k] }
        }
        return sum.map { $0 / Double(max(1, chosen.count)) }
    }

    /// The whole recording's mean spectrum, as a spectrogram of one frame.
    var averaged: PowerSpectrogram { PowerSpectrogram(averaging: self) }

    func bin(ofHz hz: Double) -> Int { min(binCount - 1, max(0, Int((hz / binHz).rounded()))) }

    /// The power of frame `t` between two frequencies.
    func power(_ t: Int, fromHz low: Double = 0, toHz high: Double = .infinity) -> Double {
        let a = bin(ofHz: low), b = bin(ofHz: min(high, sampleRate / 2))
        var sum = 0.0
        for k in a...b { sum += frames[t][k] }
        return sum
    }
}

enum Level {
    /// dB of a power, floored where there is nothing to measure.
    static func dB(power: Double) -> Double { power > 1e-14 ? 10 * log10(power) : -140 }
    static func dB(amplitude: Double) -> Double { amplitude > 1e-7 ? 20 * log10(amplitude) : -140 }
}
