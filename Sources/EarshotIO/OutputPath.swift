import EarshotCore
import Foundation

/// Where outputs go, checked before anything is read or written.
public enum OutputPath {
    /// Refuses an output that names one of the inputs: the recording would be gone before it was
    /// read through. The same file however named: another spelling of the path, a symbolic link,
    /// a hard link. `-` (standard input or output) is never a file.
    public static func refuseOverwriting(_ output: String?, inputs: [String?]) throws {
        guard let output, output != "-", let target = FileIdentity(output) else { return }
        for case let input? in inputs where input != "-" {
            if FileIdentity(input) == target { throw EarshotError.outputIsInput(output: output, input: input) }
        }
    }

    /// Makes a folder for outputs (and its parents), or says clearly why it cannot.
    public static func makeFolder(_ path: String) throws {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else { throw EarshotError.notAFolder(path: path, reason: "it exists and is not a folder") }
            return
        }
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        } catch {
            throw EarshotError.notAFolder(path: path, reason: "cannot create the folder (\(error.localizedDescription))")
        }
    }

    /// What makes two paths the same file: its device and inode (nil where the file does not exist).
    private struct FileIdentity: Equatable {
        let device: UInt64, inode: UInt64

        init?(_ path: String) {
            var status = stat()
            guard stat(path, &status) == 0 else { return nil }
            device = UInt64(status.st_dev)
            inode = UInt64(status.st_ino)
        }
    }
}

extension AudioFile {
    /// The sample format results that are not confined to ±1 (impulse responses, room
    /// generations) default to: 32-bit float wherever the container holds it, else its best.
    public static func unboundedSampleFormat(for path: String, requested: SampleFormat?) throws -> SampleFormat {
        if let requested { return requested }
        switch try AudioContainer(fileExtension: (path as NSString).pathExtension) {
        case .flac: return .s24
        case .ogg: return .vorbis
        case .wav, .aiff, .caf: return .f32
        }
    }

    /// Writes channels atomically, refusing to clip silently into an integer format.
    public static func writeUnclipped(_ channels: [[Float]], to path: String, sampleRate: Double, sampleFormat: SampleFormat) throws {
        let isFloat = [.f32, .f64].contains(sampleFormat)
        let peak = isFloat ? 0 : channels.reduce(Float(0)) { max($0, $1.reduce(0) { max($0, abs($1)) }) }
        if peak > 1 {
            throw EarshotError.wouldClip(path: path, peakDBFS: 20 * log10(Double(peak)), format: sampleFormat.rawValue)
        }
        try write(AudioBuffer(channels: channels), to: path, sampleRate: sampleRate, sampleFormat: sampleFormat)
    }
}
