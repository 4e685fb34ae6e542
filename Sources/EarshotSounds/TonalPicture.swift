import EarshotDSP
import Foundation

/// Where a sound is tonal, frame by frame: 16 kHz audio in 64 ms frames 16 ms apart, its level in
/// 62 twelfth-octave bands from 200 Hz to 7.6 kHz (each the strongest FFT bin inside it), less the
/// median of the quarter octave either side, so that only what stands out of its neighbours —
/// the partials of a bell, a beep, a horn — is left, whatever the microphone's or the room's tilt;
/// less, in a stream, each band's floor of the last two seconds, so that a fan's or a fridge's
/// steady tone is not taken for a chime. What stands out by more than 3 dB counts, up to 20 dB.
///
/// A pitch step (one band, 5.9 %) is a shift along the bands, so a drifting bell is still the
/// same picture.
public final class TonalPicture {
    public static let sampleRate = 16_000.0
    public static let frameSize = 1024
    public static let hop = 256
    public static let lowest = 200.0, highest = 7600.0
    public static let bandsPerOctave = 12
    public static let bandCount = Int((log2(highest / lowest) * Double(bandsPerOctave)).rounded(.down))
    public static var framesPerSecond: Double { sampleRate / Double(hop) }
    static let neighbours = bandsPerOctave / 4
    static let smoothing = 16, floorFrames = 125
    static let standOut: Float = 3, ceiling: Float = 20

    private let fft = RealFFT(size: frameSize)
    private let window = Window.hann.coefficients(count: frameSize)
    /// Each band's FFT bins.
    private static let bandBins: [Range<Int>] = (0..<bandCount).map { band in
        let binHertz = sampleRate / Double(frameSize)
        let low = lowest * pow(2, (Double(band) - 0.5) / Double(bandsPerOctave))
        let high = lowest * pow(2, (Double(band) + 0.5) / Double(bandsPerOctave))
        let first = Int((low / binHertz).rounded(.up)), last = Int((high / binHertz).rounded(.up))
        if last > first { return first..<last }
        let nearest = Int((lowest * pow(2, Double(band) / Double(bandsPerOctave)) / binHertz).rounded())
        return nearest..<(nearest + 1)
    }
    private let tracksFloor: Bool
    private var input: [Float]
    private var filled = 0
    private var levels: [Float], sorted: [Float]
    /// The last `smoothing` whitened frames, and the last `floorFrames` means of them.
    private var recent: [Float], means: [Float]
    private var frameCount = 0
    public private(set) var frame: [Float]

    /// `tracksFloor`: take out each band's floor of the last two seconds (a stream); an
    /// enrollment, which is all sound, keeps everything.
    public init(tracksFloor: Bool) {
        self.tracksFloor = tracksFloor
        input = [Float](repeating: 0, count: Self.frameSize)
        levels = [Float](repeating: 0, count: Self.bandCount)
        sorted = [Float](repeating: 0, count: 2 * Self.neighbours + 1)
        recent = [Float](repeating: 0, count: Self.smoothing * Self.bandCount)
        means = [Float](repeating: 0, count: Self.floorFrames * Self.bandCount)
        frame = [Float](repeating: 0, count: Self.bandCount)
    }

    /// Feeds samples; `each` sees every finished frame (`frame`, `bandCount` values).
    public func push(_ samples: UnsafeBufferPointer<Float>, each: ([Float]) -> Void) {
        var index = 0
        while index < samples.count {
            let take = min(Self.frameSize - filled, samples.count - index)
            for n in 0..<take { input[filled + n] = samples[index + n] }
            filled += take
            index += take
            guard filled == Self.frameSize else { break }
            analyse()
            each(frame)
            // Keep the last frameSize − hop samples.
            for n in 0..<(Self.frameSize - Self.hop) { input[n] = input[n + Self.hop] }
            filled = Self.frameSize - Self.hop
        }
    }

    private func analyse() {
        for n in 0..<Self.frameSize { fft.time[n] = input[n] * window[n] }
        fft.forward()
        for (band, bins) in Self.bandBins.enumerated() {
            var strongest: Float = 0
            for bin in bins {
                let re = fft.spectrum[2 * bin], im = fft.spectrum[2 * bin + 1]
                strongest = max(strongest, re * re + im * im)
            }
            levels[band] = 10 * log10(strongest + 1e-10)
        }
        let slot = frameCount % Self.smoothing, meanSlot = frameCount % Self.floorFrames
        frameCount += 1
        for band in 0..<Self.bandCount {
            // The median of the band and its neighbours (the ends repeat, as the edge bands'
            // neighbours are missing).
            for j in 0..<sorted.count {
                sorted[j] = levels[min(Self.bandCount - 1, max(0, band + j - Self.neighbours))]
            }
            insertionSort(&sorted)
            var value = levels[band] - sorted[Self.neighbours]
            if tracksFloor {
                recent[slot * Self.bandCount + band] = value
                var mean: Float = 0
                let heard = min(frameCount, Self.smoothing)
                for k in 0..<heard { mean += recent[k * Self.bandCount + band] }
                means[meanSlot * Self.bandCount + band] = mean / Float(heard)
                var floor = Float.infinity
                for k in 0..<min(frameCount, Self.floorFrames) { floor = min(floor, means[k * Self.bandCount + band]) }
                value -= max(floor, 0)
            }
            frame[band] = min(Self.ceiling, max(0, value - Self.standOut))
        }
    }

    private func insertionSort(_ values: inout [Float]) {
        for i in 1..<values.count {
            let v = values[i]
            var j = i - 1
            while j >= 0, values[j] > v {
                values[j + 1] = values[j]
                j -= 1
            }
            values[j + 1] = v
        }
    }

    /// The frames of a whole recording, one after another.
    public static func frames(of samples: [Float], tracksFloor: Bool) -> [Float] {
        let picture = TonalPicture(tracksFloor: tracksFloor)
        var out: [Float] = []
        samples.withUnsafeBufferPointer { picture.push($0) { out += $0 } }
        return out
    }
}
