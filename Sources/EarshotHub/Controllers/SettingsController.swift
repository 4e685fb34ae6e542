import EarshotHubClient
import Foundation
import Hummingbird

/// `/api/settings`: the snooze and the quiet hours, read and changed from the dashboard.
struct SettingsController {
    let store: EventStore

    func addRoutes(to group: RouterGroup<HubRequestContext>) {
        group.get { _, _ in try await store.settings().reply(now: Date()) }
        group.put(use: update)
    }

    /// Any of `snoozeMinutes`, `snoozeUntil` and `quietHours`; answers with the settings now.
    @Sendable func update(_ request: Request, context: HubRequestContext) async throws -> HubSettings.Reply {
        let data = try await request.smallBody(), now = Date()
        do {
            return try await store.updateSettings { try $0.updated(json: data, now: now) }.reply(now: now)
        } catch let error as HubRequestError {
            throw HTTPError(.badRequest, message: error.message)
        }
    }
}

extension HubSettings.Reply: ResponseEncodable {}

extension Request {
    /// A small JSON body (settings, hearing-test answers): at most 4 KiB.
    func smallBody() async throws -> Data {
        var request = self
        guard let body = try? await request.collectBody(upTo: 4096) else { throw HTTPError(.badRequest, message: "the body is larger than 4096 bytes") }
        return Data(buffer: body)
    }
}
