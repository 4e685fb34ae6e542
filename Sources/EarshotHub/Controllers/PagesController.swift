import EarshotCore
import Foundation
import Hummingbird
import NIOCore

/// The pages a browser opens (the dashboard, the hearing test, the sound check) and the script
/// and stylesheet they share: resource files of this module, read once when the hub starts.
/// They need no token to load; every call they make carries one.
struct PagesController {
    private struct Asset {
        var path: String
        var contentType: String
        var body: ByteBuffer
    }

    private let assets: [Asset]

    static let files: [(path: String, file: String)] = [
        ("/", "index.html"), ("/hearing-test", "hearing-test.html"), ("/soundcheck", "soundcheck.html"),
        ("/earshot.js", "earshot.js"), ("/earshot.css", "earshot.css"),
    ]

    init() throws {
        assets = try Self.files.map { path, file in
            let name = (file as NSString).deletingPathExtension, type = (file as NSString).pathExtension
            guard let url = Bundle.module.url(forResource: name, withExtension: type, subdirectory: "web"),
                  let data = FileManager.default.contents(atPath: url.path) else {
                throw EarshotError.internalFailure("the hub's page \(file) is missing from its resources (\(Bundle.module.bundlePath))")
            }
            let contentType = ["html": "text/html; charset=utf-8", "js": "text/javascript; charset=utf-8", "css": "text/css; charset=utf-8"][type]!
            return Asset(path: path, contentType: contentType, body: ByteBuffer(bytes: data))
        }
    }

    func addRoutes(to router: Router<HubRequestContext>) {
        for asset in assets {
            router.get(RouterPath(asset.path)) { _, _ in
                Response(status: .ok, headers: [.contentType: asset.contentType, .cacheControl: "no-cache"], body: .init(byteBuffer: asset.body))
            }
        }
    }
}
