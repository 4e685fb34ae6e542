import EarshotCore
import Foundation

/// Refuses an output that names one of the inputs: the recording would be gone before it was
/// read through. The same file however named: another spelling of the path, a symbolic link, a
/// hard link. `-` (standard input or output) is never a file.
func refuseOverwriting(_ output: String?, inputs: [String?]) throws {
    guard let output, output != "-", let target = FileIdentity(output) else { return }
    for case let input? in inputs where input != "-" {
        if FileIdentity(input) == target {
            throw EarshotError.invalidArgument("the output \(output) is the input \(input): write to another file, or the recording is lost")
        }
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
