import EarshotCore
import Foundation
import EarshotDSP
import EarshotTestSupport
import Testing

struct FFTCase: Decodable { let size: Int; let signal: [Float]; let real: [Double]; let imag: [Double] }
struct WindowCase: Decodable { let window: String; let count: Int; let periodic: Bool; let values: [Double] }

@Suite struct RealFFTTests {
    @Test func matchesNumPyForEverySize() throws {
        for reference in try fixture("fft", as: [FFTCase].self) {
            let fft = RealFFT(size: reference.size)
            let (re, im) = fft.transform(reference.signal)
            let scale = max(1, reference.real.map(abs).max()!)
            for k in 0..<fft.binCount {
                #expect(abs(Double(re[k]) - reference.real[k]) / scale < 1e-5, "size \(reference.size) bin \(k) real")
                #expect(abs(Double(im[k]) - reference.imag[k]) / scale < 1e-5, "size \(reference.size) bin \(k) imag")
            }
        }
    }

    @Test(arguments: [1, 2, 3, 16, 255, 512, 1000, 4096])
    func inverseUndoesForward(size: Int) {
        let fft = RealFFT(size: size)
        let x = noise(count: size, seed: UInt64(size))
        for i in 0..<size { fft.time[i] = x[i] }
        fft.forward()
        let spectrumBefore = Array(fft.spectrum)
        fft.inverse()
        for i in 0..<size { #expect(abs(fft.time[i] - x[i]) < 1e-5) }
        #expect(Array(fft.spectrum) == spectrumBefore, "inverse must leave the spectrum intact")
    }

    @Test func sineLandsInItsBin() {
        let fft = RealFFT(size: 1024)
        let (re, im) = fft.transform(sine(frequencyHz: 1000, sampleRate: 16_000, count: 1024))
        let power = zip(re, im).map { $0 * $0 + $1 * $1 }
        #expect(power.firstIndex(of: power.max()!) == 64)  // 1000 Hz / (16000 / 1024)
    }
}

@Suite struct WindowTests {
    @Test func matchesSciPy() throws {
        for reference in try fixture("windows", as: [WindowCase].self) {
            let window: Window =
                switch reference.window {
                case "hann": .hann
                case "hamming": .hamming
                case "blackman": .blackman
                default: .kaiser(beta: 8.6)
                }
            let values = window.coefficients(count: reference.count, periodic: reference.periodic)
            for (mine, theirs) in zip(values, reference.values) {
                #expect(abs(Double(mine) - theirs) < 1e-6, "\(reference.window) n=\(reference.count) periodic=\(reference.periodic)")
            }
        }
    }

    @Test func sqrtHannSquaredIsHann() {
        let root = Window.sqrtHann.coefficients(count: 128), hann = Window.hann.coefficients(count: 128)
        for i in 0..<128 { #expect(abs(root[i] * root[i] - hann[i]) < 1e-6) }
    }
}

@Suite struct LevelSpectrumTests {
    /// A full-scale 1 kHz sine: −3 dBFS RMS, 0 dBFS peak, 0 dB in its band, nothing far away.
    @Test func sineReadsWhereItIs() {
        let rate = 48_000.0
        let analyzer = LevelSpectrumAnalyzer(sampleRate: rate)
        let sine = (0..<Int(rate)).map { Float(sin(2 * Double.pi * 1000 * Double($0) / rate)) }
        let readings = sine.withUnsafeBufferPointer { analyzer.push($0) }
        #expect(readings.count == 20)
        let last = readings.last!
        #expect(abs(last.levelDBFS - -3.01) < 0.05 && abs(last.peakDBFS) < 0.01)
        let ratio = log(last.highHz / last.lowHz) / Float(last.bandsDB.count)
        let band = Int(log(1000 / last.lowHz) / ratio)
        #expect(abs(max(last.bandsDB[band], last.bandsDB[band - 1], last.bandsDB[band + 1]) - 0) < 1.5, "\(last.bandsDB[(band - 1)...(band + 1)])")
        #expect(last.bandsDB[0] < -80 && last.bandsDB.last! < -80)
    }

    /// White noise: the bands' powers add up to the signal's level, so the display is in dB that mean something.
    @Test func bandsAddUpToTheLevel() {
        let rate = 16_000.0
        let analyzer = LevelSpectrumAnalyzer(sampleRate: rate, bandCount: 64, lowHz: 20, highHz: 8000)
        var random = SeededRandom(seed: 7)
        let noise = (0..<Int(rate)).map { _ in Float(random.nextGaussian() * 0.1) }
        let last = noise.withUnsafeBufferPointer { analyzer.push($0) }.last!
        // Bands are relative to a full-scale sine (mean square ½), the level to a full-scale square.
        let total = 10 * log10(last.bandsDB.reduce(0) { $0 + pow(10, $1 / 10) } / 2)
        #expect(abs(total - -20) < 1.5, "band total \(total) dB")
        #expect(abs(last.levelDBFS - -20) < 1)
    }
}
