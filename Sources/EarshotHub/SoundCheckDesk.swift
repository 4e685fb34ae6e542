import EarshotCapture
import EarshotCore
import EarshotHubClient
import Foundation

/// `POST /api/soundcheck?rate=R&roomTone=S`: a take recorded (or opened) in the browser, checked as
/// `earshot soundcheck` checks one. The body is the take itself: mono 32-bit float samples,
/// little-endian, at `rate`; its first `roomTone` seconds are room tone when the page asked for
/// quiet, otherwise the check finds the room tone in the quietest moments.
enum SoundCheckDesk {
    /// Longer takes belong to `earshot soundcheck FILE`: a page records seconds, not minutes.
    static let longestSeconds = 60.0
    static let rates = 8_000.0...96_000.0

    struct Reply: Encodable, Sendable {
        var report: SoundCheckReport
        /// Waveform with level zones, spectrogram and findings, as `--png` draws them.
        var chartSVG: String
    }

    /// The largest body a take at `rate` may have.
    static func maximumBytes(rate: Double) -> Int { Int(rate * longestSeconds) * MemoryLayout<Float>.size }

    /// Reads the query; throws a one-line reason for a bad one.
    static func parameters(rate: String?, roomTone: String?) throws(HubRequestError) -> (rate: Double, roomToneSeconds: Double) {
        guard let text = rate, let value = Double(text), rates.contains(value) else {
            throw HubRequestError("'rate' must be the take's sample rate, 8000 to 96000 Hz")
        }
        var seconds = 0.0
        if let text = roomTone {
            guard let value = Double(text), value >= 0, value <= 5 else { throw HubRequestError("'roomTone' must be 0 to 5 seconds") }
            seconds = value
        }
        return (value, seconds)
    }

    /// The check of one take.
    static func check(_ body: [UInt8], rate: Double, roomToneSeconds: Double) throws(HubRequestError) -> Reply {
        guard body.count % MemoryLayout<Float>.size == 0 else {
            throw HubRequestError("the body must be 32-bit float samples (its length, \(body.count) bytes, is not a multiple of 4)")
        }
        let samples = body.withUnsafeBytes { raw in
            (0..<(body.count / 4)).map { Float(bitPattern: UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: 4 * $0, as: UInt32.self))) }
        }
        guard Double(samples.count) > roomToneSeconds * rate else {
            throw HubRequestError("the take is shorter than its \(roomToneSeconds) s of room tone")
        }
        do {
            let check = try SoundCheck(samples, sampleRate: rate, roomToneSeconds: roomToneSeconds)
            return Reply(report: check.report, chartSVG: SoundCheckChart.svg(check, title: "Sound check: this browser's microphone"))
        } catch let error as EarshotError {
            throw HubRequestError(error.description)
        } catch {
            throw HubRequestError("the take could not be checked: \(error)")
        }
    }
}
