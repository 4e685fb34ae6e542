import AsyncHTTPClient
import Foundation
import NIOCore
import NIOFoundationCompat
/// Whether the hub holds sounds quiet right now (snoozed from the dashboard, or in its quiet
/// hours), asked every `interval` seconds; false until the hub has answered.
public final class HubQuietFollower: @unchecked Sendable {
    public let address: HubAddress
    private let lock = NSLock()
    private var quiet = false
    private var task: Task<Void, Never>?

    public init(address: HubAddress, interval: Double = 15) {
        self.address = address
        task = Task.detached { [weak self] in
            let client = HTTPClient.failingFast()
            defer { _ = client.shutdown() as EventLoopFuture<Void> }
            while !Task.isCancelled {
                await self?.ask(client)
                try? await Task.sleep(for: .seconds(interval))
            }
        }
    }

    public var isQuiet: Bool { lock.withLock { quiet } }

    private func ask(_ client: HTTPClient) async {
        var request = HTTPClientRequest(url: address.endpoint("/api/settings"))
        request.headers.add(name: "Authorization", value: "Bearer \(address.token)")
        guard let response = try? await client.execute(request, timeout: .seconds(10)), response.status == .ok,
              let body = try? await response.body.collect(upTo: 16 * 1024),
              let object = (try? JSONSerialization.jsonObject(with: Data(buffer: body))) as? [String: Any],
              let now = object["quietNow"] as? Bool else { return }
        lock.withLock { quiet = now }
    }

    public func close() { task?.cancel() }
}
