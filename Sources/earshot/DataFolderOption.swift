import ArgumentParser
import EarshotAudiometry
import EarshotCore
import EarshotHub
import Foundation

/// `--data DIR`: the one folder `serve`, `watch`, `sounds`, `hearing-test` and `audiogram` share
/// (hub.sqlite, results.sqlite, tokens), so a hint one of them prints works in the others.
struct DataFolderOption: ParsableArguments {
    @Option(help: "Data folder (default: $EARSHOT_HOME, else ~/.local/share/earshot).")
    var data: String?

    var folder: String { data ?? DataDirectory.path }

    /// The enrolled sounds, in the folder's hub.sqlite.
    func openSounds() throws -> SoundStore {
        try SoundStore(path: (folder as NSString).appendingPathComponent("hub.sqlite"))
    }

    /// Where hearing-test results are kept: results.sqlite in the folder, unless `--db` names a file.
    func resultsPath(db: String?) -> String { db ?? ResultStore.path(in: folder) }
}
