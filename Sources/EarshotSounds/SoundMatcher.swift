import Foundation

/// An enrolled sound as the matcher knows it: the landmarks of its first 0.8 s (enough to know
/// a chime, and the longest it waits to announce), one template per enrollment recording.
public struct SoundTemplate: Equatable, Sendable {
    public var name: String
    /// Landmark sets, 10 ms apart.
    public var frames: [UInt64]
    public var landmarkCount: Int { frames.reduce(0) { $0 + $1.nonzeroBitCount } }

    static let maximumFrames = 80
    static let minimumLandmarks = 12

    /// From an enrollment clip (16 kHz, the sound with margins): the frames from the first
    /// landmark on.
    public init(name: String, clip: [Float]) throws {
        let all = LandmarkAnalyzer.landmarks(of: clip)
        guard let first = all.firstIndex(where: { $0 != 0 }) else {
            throw SoundMatchError.notTonal(name)
        }
        var frames = Array(all[first..<min(all.count, first + Self.maximumFrames)])
        while frames.last == 0 { frames.removeLast() }
        self.name = name
        self.frames = frames
        guard landmarkCount >= Self.minimumLandmarks else { throw SoundMatchError.notTonal(name) }
    }
}

public enum SoundMatchError: Error, CustomStringConvertible {
    case notTonal(String)
    public var description: String {
        switch self {
        case .notTonal(let name):
            "'\(name)' holds no tonal sound (a chime, bell or beep) to recognise it by: record it closer, with less noise around"
        }
    }
}

/// Scores how well the last moments of a stream match a template: the F1 of landmark overlap,
/// each landmark found if the stream has one in its band within two frames, under the best of
/// three pitch offsets for the whole template (a band, 5.7 %, either way: a bell's pitch drifts
/// with temperature and age, a cheap recording's with its clock; each note on its own may not
/// move, or a neighbour's chime a note apart would pass), scaled by how much of the template's
/// length is found. Recall alone would take any busy sound for the chime; precision alone, a
/// single matching beep.
public struct LandmarkScorer: Sendable {
    public let template: SoundTemplate
    /// Bands the template lives in, widened by the tolerance: landmarks elsewhere do not count
    /// against it (speech below a chime is not the chime's business).
    private let bandMask: UInt64

    public init(template: SoundTemplate) {
        self.template = template
        let used = template.frames.reduce(UInt64(0)) { $0 | $1 }
        bandMask = used | used << 1 | used >> 1 | used << 2 | used >> 2
    }

    /// The score of the template ending at the last of `frames` (0 until there are two more
    /// frames than the template holds).
    public func score(_ frames: ArraySlice<UInt64>) -> Double {
        let length = template.frames.count
        guard frames.count >= length + 2 else { return 0 }
        let window = frames.suffix(length + 2)  // two frames of slack before the start
        let start = window.startIndex + 2
        var best = 0.0
        for shift in -1...1 {
            var found = 0, total = 0, matched = 0, present = 0
            var quarterFound = [0, 0, 0, 0], quarterTotal = [0, 0, 0, 0]
            for (offset, marks) in template.frames.enumerated() {
                let shifted = shift >= 0 ? marks << UInt64(shift) : marks >> UInt64(-shift)
                total += shifted.nonzeroBitCount
                var near: UInt64 = 0
                for t in max(window.startIndex, start + offset - 2)...min(window.endIndex - 1, start + offset + 2) { near |= window[t] }
                found += (shifted & near).nonzeroBitCount
                let quarter = 4 * offset / length
                quarterTotal[quarter] += shifted.nonzeroBitCount
                quarterFound[quarter] += (shifted & near).nonzeroBitCount
                // Precision: the stream's landmarks at this frame, in the template's bands, that
                // some template landmark explains.
                let here = window[start + offset] & (shift >= 0 ? bandMask << UInt64(shift) : bandMask >> UInt64(-shift))
                present += here.nonzeroBitCount
                var explaining: UInt64 = 0
                for t in max(0, offset - 2)...min(length - 1, offset + 2) {
                    let m = template.frames[t]
                    explaining |= shift >= 0 ? m << UInt64(shift) : m >> UInt64(-shift)
                }
                matched += (here & explaining).nonzeroBitCount
            }
            guard total > 0, present > 0 else { continue }
            let recall = Double(found) / Double(total), precision = Double(matched) / Double(present)
            // The whole sound must be there, not one part of it: the share of the template's
            // quarters (those with landmarks) found at least 30 %. A lone beep at a chime's
            // first note matches half a chime perfectly, and scores half.
            let quarters = (0..<4).filter { quarterTotal[$0] > 0 }
            let covered = quarters.filter { Double(quarterFound[$0]) >= 0.3 * Double(quarterTotal[$0]) }.count
            let coverage = quarters.isEmpty ? 0 : Double(covered) / Double(quarters.count)
            if recall + precision > 0 { best = max(best, coverage * 2 * recall * precision / (recall + precision)) }
        }
        return best
    }
}
