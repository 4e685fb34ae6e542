import Foundation

/// Files that appear whole or not at all: written beside their destination under a hidden
/// temporary name, then renamed into place (atomic on one file system).
public enum AtomicFile {
    public static func write(_ data: Data, to path: String) throws {
        let url = URL(fileURLWithPath: path)
        let directory = url.deletingLastPathComponent()
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw EarshotError.noFolder(path: path, folder: directory.path)
        }
        let temporary = directory.appendingPathComponent(".\(url.lastPathComponent).\(getpid()).partial")
        do {
            try data.write(to: temporary)
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            throw EarshotError.writeFailed(path: path, reason: error.localizedDescription)
        }
        guard rename(temporary.path, url.path) == 0 else {
            let reason = String(cString: strerror(errno))
            try? FileManager.default.removeItem(at: temporary)
            throw EarshotError.writeFailed(path: path, reason: reason)
        }
    }
}
