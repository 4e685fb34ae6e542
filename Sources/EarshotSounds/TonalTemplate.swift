import Foundation

/// An enrolled sound's tonal picture (`TonalPicture`), from the first frame that holds a tenth of
/// its loudest frame's tonal energy to the last, at most four seconds; only tones that last
/// (`lasting` frames in one band, 0.16 s with the frame's own length): a bell's partials, not the
/// chance peaks of a knock or of noise.
public struct TonalTemplate: Sendable {
    /// frameCount × bandCount.
    public let frames: [Float]
    public var frameCount: Int { frames.count / TonalPicture.bandCount }

    static let maximumFrames = Int(4 * TonalPicture.framesPerSecond)
    /// Fewer lasting tonal cells than this is no picture to know a sound by (a knock, a cry's
    /// noise).
    static let minimumCells = 20
    static let lasting = 6

    /// Clears each band's runs of standing-out frames shorter than `lasting`.
    static func keepLastingTones(_ frames: inout [Float]) {
        let bands = TonalPicture.bandCount, count = frames.count / bands
        for b in 0..<bands {
            var start = 0
            while start < count {
                guard frames[start * bands + b] > 0 else { start += 1; continue }
                var end = start
                while end < count, frames[end * bands + b] > 0 { end += 1 }
                if end - start < lasting { for k in start..<end { frames[k * bands + b] = 0 } }
                start = end
            }
        }
    }

    /// Nil when the recording holds too little that is tonal.
    public init?(clip: [Float]) {
        let bands = TonalPicture.bandCount
        let margin = [Float](repeating: 0, count: TonalPicture.frameSize)
        var all = TonalPicture.frames(of: margin + clip + margin, tracksFloor: false)
        Self.keepLastingTones(&all)
        let energies = stride(from: 0, to: all.count, by: bands).map { start in all[start..<(start + bands)].reduce(0) { $0 + $1 * $1 } }
        guard let loudest = energies.max(), loudest > 0,
              let first = energies.firstIndex(where: { $0 > 0.1 * loudest }),
              let last = energies.lastIndex(where: { $0 > 0.1 * loudest }) else { return nil }
        let end = min(last + 1, first + Self.maximumFrames)
        frames = Array(all[(first * bands)..<(end * bands)])
        guard frames.filter({ $0 > 0 }).count >= Self.minimumCells else { return nil }
    }
}

/// How well the stream's last moments match any part of a template: the normalised correlation
/// of the stream's last 0.6 s (or the whole template, if shorter) with every stretch of the
/// template as long, under three pitch offsets (a band either way), in the bands the template
/// uses (two bands either side, for the offsets): speech or music elsewhere is not its business.
/// A second recording cut at another point, or a repeating alarm heard mid-pattern, still lines
/// up with some stretch of it.
///
/// Kept as it goes: for each template frame, the sum of frame likenesses along each diagonal
/// of (stream frame, template frame), so each new frame costs one likeness per template frame
/// and offset. Nothing is allocated after it is made.
struct TonalScorer {
    static let window = Int((0.6 * TonalPicture.framesPerSecond).rounded())
    static let offsets = [-1, 0, 1]

    private let length: Int, span: Int
    /// The bands the template uses, widened by two.
    private let bands: [Int]
    /// Per offset, the template shifted, frameCount × bands.count.
    private let shifted: [[Float]]
    /// Per offset, the energy of the template's stretch starting at each frame.
    private let stretchEnergy: [[Float]]
    /// Per offset, the last `span + 1` rows of running diagonal sums, a ring.
    private var diagonal: [[Float]]
    private var energies: [Float]
    private var newest = -1, heard = 0

    init(_ template: TonalTemplate) {
        let count = TonalPicture.bandCount
        let length = template.frameCount, span = min(length, Self.window)
        self.length = length
        self.span = span
        var used = [Bool](repeating: false, count: count)
        for k in 0..<length { for b in 0..<count where template.frames[k * count + b] > 0 { used[b] = true } }
        let bands = (0..<count).filter { b in (max(0, b - 2)...min(count - 1, b + 2)).contains { used[$0] } }
        self.bands = bands
        var shifted: [[Float]] = [], stretchEnergy: [[Float]] = []
        for offset in Self.offsets {
            var frames = [Float](repeating: 0, count: length * bands.count)
            var energy = [Float](repeating: 0, count: length)
            for k in 0..<length {
                for (i, b) in bands.enumerated() where b - offset >= 0 && b - offset < count {
                    let value = template.frames[k * count + b - offset]
                    frames[k * bands.count + i] = value
                    energy[k] += value * value
                }
            }
            shifted.append(frames)
            stretchEnergy.append((0...(length - span)).map { k in energy[k..<(k + span)].reduce(0, +) })
        }
        self.shifted = shifted
        self.stretchEnergy = stretchEnergy
        diagonal = Self.offsets.map { _ in [Float](repeating: 0, count: (span + 1) * length) }
        energies = [Float](repeating: 0, count: span)
    }

    /// The score once a stream frame (`bandCount` values) arrives.
    mutating func push(_ frame: [Float]) -> Float {
        let previous = newest
        newest = (newest + 1) % (span + 1)
        heard += 1
        let rows = span + 1, bandTotal = bands.count
        var energy: Float = 0
        for b in bands { energy += frame[b] * frame[b] }
        energies[heard % span] = energy
        let streamEnergy = energies.reduce(0, +)
        var best: Float = 0
        for o in Self.offsets.indices {
            let template = shifted[o]
            // The stretch ending at template frame e, ending now, began `span` frames ago: the
            // running sum now, less the one from before its first frame.
            let before = (newest - span + rows) % rows
            for k in 0..<length {
                var likeness: Float = 0
                for (i, b) in bands.enumerated() { likeness += frame[b] * template[k * bandTotal + i] }
                let carried = k > 0 && previous >= 0 ? diagonal[o][previous * length + k - 1] : 0
                diagonal[o][newest * length + k] = likeness + carried
            }
            guard streamEnergy > 0 else { continue }
            for end in (span - 1)..<length {
                let earlier = end >= span && heard > span ? diagonal[o][before * length + end - span] : 0
                let sum = diagonal[o][newest * length + end] - earlier
                let norm = (stretchEnergy[o][end - span + 1] * streamEnergy).squareRoot()
                if norm > 0 { best = max(best, sum / norm) }
            }
        }
        return best
    }

    /// The best score any of `templates` reaches over `frames` (a stream's pictures, one after
    /// another).
    static func best(of templates: [TonalTemplate], over frames: [Float]) -> Double {
        let bands = TonalPicture.bandCount
        var best: Float = 0
        for template in templates {
            var scorer = TonalScorer(template)
            var frame = [Float](repeating: 0, count: bands)
            for start in stride(from: 0, to: frames.count, by: bands) {
                for b in 0..<bands { frame[b] = frames[start + b] }
                best = max(best, scorer.push(frame))
            }
        }
        return Double(best)
    }
}
