import EarshotDSP
import Foundation

/// Time-frequency landmarks of 16 kHz audio: every 10 ms, the log-spaced bands (200 Hz–7 kHz)
/// that hold a tonal peak standing clear of the background. The background of each band is
/// tracked as it goes (falling at once, rising 5 dB a second), so steady noise, a fridge's hum
/// or a room's level never make landmarks, and a peak stays a peak under a microphone's
/// colouration or another level. Chimes, bells and beeps are made of such peaks; speech makes
/// few that last, knocks and clatter almost none.
public final class LandmarkAnalyzer {
    public static let sampleRate = 16_000.0
    public static let hop = 160
    public static let bandCount = 64
    static let fftSize = 512
    static let lowHz = 200.0, highHz = 7000.0
    /// How far above its band's background a peak must stand, and above its neighbours.
    static let clearanceDB: Float = 12
    static let prominenceDB: Float = 6
    /// At most this many landmarks a frame, the strongest: a chime has a few partials.
    static let perFrame = 3
    static let floorRisePerFrame: Float = 0.05

    private let fft = RealFFT(size: fftSize)
    private let window = Window.hann.coefficients(count: fftSize)
    private let bandBins: [Range<Int>]
    private var history = [Float](repeating: 0, count: fftSize)
    private var filled = 0
    private var pending = 0
    private var floor: [Float]?
    /// The last two frames' raw peaks: a landmark is a peak that has held for 30 ms (within a
    /// band), as a bell's partials do and speech's gliding harmonics mostly do not.
    private var previous: (UInt64, UInt64) = (0, 0)

    public init() {
        let binHz = Self.sampleRate / Double(Self.fftSize), ratio = log(Self.highHz / Self.lowHz) / Double(Self.bandCount)
        bandBins = (0..<Self.bandCount).map { band in
            let lower = Self.lowHz * exp(ratio * Double(band)), upper = Self.lowHz * exp(ratio * Double(band + 1))
            let first = Int((lower / binHz).rounded(.up)), last = Int((upper / binHz).rounded(.up))
            if last > first { return first..<last }
            let nearest = Int((sqrt(lower * upper) / binHz).rounded())
            return nearest..<(nearest + 1)
        }
    }

    /// The band a frequency falls in.
    public static func band(ofHz hz: Double) -> Int {
        Int(log(hz / lowHz) / (log(highHz / lowHz) / Double(bandCount)))
    }

    public func reset() {
        history = [Float](repeating: 0, count: Self.fftSize)
        filled = 0
        pending = 0
        floor = nil
        previous = (0, 0)
    }

    /// Feeds samples; returns one landmark set (a bit per band) per completed 10 ms hop.
    public func push(_ samples: ArraySlice<Float>) -> [UInt64] {
        var frames: [UInt64] = []
        for sample in samples {
            history[filled % Self.fftSize] = sample
            filled += 1
            pending += 1
            if pending == Self.hop {
                pending = 0
                // No landmarks until the window is full: a half-empty one is quieter than the room.
                frames.append(filled >= Self.fftSize ? frame() : 0)
            }
        }
        return frames
    }

    public func push(_ samples: [Float]) -> [UInt64] { push(samples[...]) }

    private func frame() -> UInt64 {
        let start = filled % Self.fftSize
        for n in 0..<Self.fftSize { fft.time[n] = history[(start + n) % Self.fftSize] * window[n] }
        fft.forward()
        var levels = [Float](repeating: 0, count: Self.bandCount)
        for (band, bins) in bandBins.enumerated() {
            var power: Float = 1e-12
            for bin in bins { power += fft.spectrum[2 * bin] * fft.spectrum[2 * bin] + fft.spectrum[2 * bin + 1] * fft.spectrum[2 * bin + 1] }
            levels[band] = 10 * log10(power / Float(bins.count))
        }
        var floor = self.floor ?? levels
        var peaks: [(band: Int, clearance: Float)] = []
        for band in 0..<Self.bandCount {
            let level = levels[band]
            let left = band > 1 ? levels[band - 2] : level - 100, right = band < Self.bandCount - 2 ? levels[band + 2] : level - 100
            let isPeak = (band == 0 || level >= levels[band - 1]) && (band == Self.bandCount - 1 || level >= levels[band + 1])
                && level - max(left, right) >= Self.prominenceDB
            if isPeak && level - floor[band] >= Self.clearanceDB { peaks.append((band, level - floor[band])) }
            floor[band] = level < floor[band] ? level : floor[band] + Self.floorRisePerFrame
        }
        self.floor = floor
        var raw: UInt64 = 0
        for peak in peaks.sorted(by: { $0.clearance > $1.clearance }).prefix(Self.perFrame) { raw |= 1 << UInt64(peak.band) }
        func widened(_ m: UInt64) -> UInt64 { m | m << 1 | m >> 1 }
        let held = raw & widened(previous.0) & widened(previous.1)
        previous = (raw, previous.0)
        return held
    }

    /// All landmarks of a whole recording.
    public static func landmarks(of samples: [Float]) -> [UInt64] {
        LandmarkAnalyzer().push(samples)
    }
}
