import AsyncHTTPClient
import EarshotCore
import Foundation

/// Where a producer sends its events: a hub's address and a token.
public struct HubAddress: Sendable {
    public var url: URL
    public var token: String

    /// Checks both before anything runs: an http(s) URL with a host, and a token.
    public init(url text: String, token: String) throws {
        guard let url = URL(string: text.hasSuffix("/") ? String(text.dropLast()) : text), let scheme = url.scheme,
              ["http", "https"].contains(scheme), url.host != nil else {
            throw HubClientError.notAHubURL(text)
        }
        guard !token.isEmpty else { throw HubClientError.noToken }
        self.url = url
        self.token = token
    }

    func endpoint(_ path: String) -> String { url.absoluteString + path }
}

extension HTTPClient {
    /// A client that reports a refused connection at once: the callers here retry on their own
    /// schedule, and a pool that backs off on its own would hold a request for up to a minute
    /// after the hub comes back.
    static func failingFast() -> HTTPClient {
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool.retryConnectionEstablishment = false
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }
}
