import Foundation

/// What a level meter and a spectrum display show for one moment of sound.
public struct LevelSpectrum: Equatable, Sendable {
    /// RMS over the last hop, dBFS (a full-scale square wave is 0, a full-scale sine −3).
    public var levelDBFS: Float
    /// The largest sample magnitude over the last hop, dBFS.
    public var peakDBFS: Float
    /// Power per band, dB relative to a full-scale sine: a full-scale sine reads 0 dB in its band.
    public var bandsDB: [Float]
    /// The edges of the first and last band, Hz; bands are spaced evenly in log frequency.
    public var lowHz: Float
    public var highHz: Float

    public init(levelDBFS: Float, peakDBFS: Float, bandsDB: [Float], lowHz: Float, highHz: Float) {
        self.levelDBFS = levelDBFS
        self.peakDBFS = peakDBFS
        self.bandsDB = bandsDB
        self.lowHz = lowHz
        self.highHz = highHz
    }
}

/// Turns a stream of mono samples into `LevelSpectrum`s at a fixed rate (20 a second by
/// default): level and peak over each hop, and a Hann-windowed spectrum of the last ~85 ms
/// gathered into log-spaced bands, as a display wants them. Meant for the thread that sends
/// them on, not the audio callback.
public final class LevelSpectrumAnalyzer {
    public let sampleRate: Double
    public let hopFrames: Int
    public let bandCount: Int
    public let lowHz: Float
    public let highHz: Float
    private let fft: RealFFT
    private let window: [Float]
    /// 2 / (N·Σw²): turns |X_k|² of an interior bin into its share of the mean square.
    private let powerScale: Float
    /// For each band, the bins whose centres fall inside it (at least one: the nearest).
    private let bandBins: [Range<Int>]
    private var history: [Float]
    private var filled = 0
    private var hopSumSquares: Double = 0
    private var hopPeak: Float = 0
    private var hopCount = 0

    public init(sampleRate: Double, framesPerSecond: Double = 20, bandCount: Int = 96, lowHz: Float = 50, highHz: Float = 16_000) {
        precondition(sampleRate >= 8000 && framesPerSecond > 0 && bandCount >= 1)
        self.sampleRate = sampleRate
        hopFrames = max(1, Int((sampleRate / framesPerSecond).rounded()))
        self.bandCount = bandCount
        self.lowHz = lowHz
        self.highHz = min(highHz, Float(sampleRate / 2) * 0.98)
        var size = 1
        while size < Int(sampleRate * 0.08) { size *= 2 }
        fft = RealFFT(size: size)
        window = Window.hann.coefficients(count: size)
        powerScale = 2 / (Float(size) * window.reduce(0) { $0 + $1 * $1 })
        history = [Float](repeating: 0, count: size)
        let binHz = Float(sampleRate) / Float(size), ratio = log(self.highHz / lowHz) / Float(bandCount)
        bandBins = (0..<bandCount).map { band in
            let lower = lowHz * exp(ratio * Float(band)), upper = lowHz * exp(ratio * Float(band + 1))
            let first = Int((lower / binHz).rounded(.up)), last = Int((upper / binHz).rounded(.up))
            if last > first { return max(1, first)..<min(size / 2, last) }
            let nearest = min(size / 2 - 1, max(1, Int((sqrt(lower * upper) / binHz).rounded())))
            return nearest..<(nearest + 1)
        }
    }

    /// Feeds samples; returns a reading for every hop completed by them.
    public func push(_ samples: UnsafeBufferPointer<Float>) -> [LevelSpectrum] {
        var readings: [LevelSpectrum] = []
        for sample in samples {
            history[filled % history.count] = sample
            filled += 1
            hopSumSquares += Double(sample * sample)
            hopPeak = max(hopPeak, abs(sample))
            hopCount += 1
            if hopCount == hopFrames { readings.append(reading()) }
        }
        return readings
    }

    private func reading() -> LevelSpectrum {
        let size = history.count, start = filled % size
        for index in 0..<size { fft.time[index] = history[(start + index) % size] * window[index] }
        fft.forward()
        let bands = bandBins.map { bins -> Float in
            var power: Float = 0
            for bin in bins {
                let re = fft.spectrum[2 * bin], im = fft.spectrum[2 * bin + 1]
                power += re * re + im * im
            }
            // ×2: a sine's mean square is half its peak², so a full-scale sine reads 0 dB.
            return Self.decibels(2 * power * powerScale)
        }
        let reading = LevelSpectrum(
            levelDBFS: Self.decibels(Float(hopSumSquares / Double(hopCount))), peakDBFS: Self.decibels(hopPeak * hopPeak),
            bandsDB: bands, lowHz: lowHz, highHz: highHz)
        hopSumSquares = 0
        hopPeak = 0
        hopCount = 0
        return reading
    }

    /// Power to dB, floored at −200 so silence stays finite.
    static func decibels(_ power: Float) -> Float {
        power > 1e-20 ? 10 * log10(power) : -200
    }
}
