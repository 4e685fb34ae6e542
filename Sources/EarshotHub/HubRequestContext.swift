import Foundation
import Hummingbird

/// What every request to the hub carries: Hummingbird's core context, and a JSON encoder whose
/// output is stable (sorted keys, slashes as they are), so replies read the same every time.
public struct HubRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage

    public init(source: Source) {
        coreContext = .init(source: source)
    }

    public var responseEncoder: JSONEncoder { Self.encoder }

    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()
}
