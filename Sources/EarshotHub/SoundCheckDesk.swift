import EarshotCapture
import EarshotCore
import EarshotHubClient
import Foundation

/// The dashboard's sound check.
/// - `POST /api/soundcheck?rate=R&roomTone=S`: a take recorded in the browser. The body is the
///   take itself: mono 32-bit float samples, little-endian, at `rate`; its first `roomTone`
///   seconds are room tone, as the page asks for quiet first.
/// - `POST /api/soundcheck/file?name=N`: a recording file opened on the page, checked by the
///   same code as `earshot soundcheck FILE`, so both give the same verdict.
enum SoundCheckDesk {
    /// Longer takes belong to `earshot soundcheck FILE`: a page records seconds, not minutes.
    static let longestSeconds = 60.0
    static let rates = 8_000.0...96_000.0
    /// The largest recording file the page may send (ten minutes of 16-bit 48 kHz mono and more).
    static let largestFileBytes = 64 << 20

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
        return try reply(title: "Sound check: this browser's microphone") { try SoundCheck(samples, sampleRate: rate, roomToneSeconds: roomToneSeconds) }
    }

    /// The check of a recording file's bytes, named `name` on the page.
    static func check(recording body: [UInt8], name: String?) throws(HubRequestError) -> Reply {
        let shown = String((name ?? "").unicodeScalars.filter { !CharacterSet.controlCharacters.contains($0) && $0 != "/" }.prefix(100))
        guard !body.isEmpty else { throw HubRequestError("the recording is empty (0 bytes)") }
        // libsndfile reads files: the bytes go to a private temporary file, removed at once.
        let path = (NSTemporaryDirectory() as NSString).appendingPathComponent("earshot-soundcheck-\(UUID().uuidString)")
        guard FileManager.default.createFile(atPath: path, contents: Data(body), attributes: [.posixPermissions: 0o600]) else {
            throw HubRequestError("the recording could not be kept for checking (temporary folder not writable)")
        }
        defer { try? FileManager.default.removeItem(atPath: path) }
        return try reply(title: "Sound check: \(shown.isEmpty ? "the recording" : shown)") {
            do {
                return try SoundCheck(recordingAt: path)
            } catch let error as EarshotFailure {
                // The reason without the temporary file's name.
                throw HubRequestError(error.description.replacingOccurrences(of: path + ": ", with: "").replacingOccurrences(of: path, with: "the recording"))
            }
        }
    }

    private static func reply(title: String, _ check: () throws -> SoundCheck) throws(HubRequestError) -> Reply {
        do {
            let check = try check()
            return Reply(report: check.report, chartSVG: SoundCheckChart.svg(check, title: title))
        } catch let error as EarshotFailure {
            throw HubRequestError(error.description)
        } catch {
            throw HubRequestError("the recording could not be checked: \(error)")
        }
    }
}
