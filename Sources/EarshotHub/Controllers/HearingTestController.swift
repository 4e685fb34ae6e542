import Hummingbird

/// `/api/hearing-test`: a hearing test for the person at the hub machine, its tones played
/// there; one test at a time.
struct HearingTestController {
    let desk: HearingTestDesk

    func addRoutes(to group: RouterGroup<HubRequestContext>) {
        group.get { request, _ in
            await desk.status(procedure: request.uri.queryParameters["procedure"].map(String.init),
                              frequencies: request.uri.queryParameters["frequencies"].map(String.init))
        }
        group.post { request, _ in
            let body = try await request.smallBody()
            return try await Self.reply { () async throws(HearingTestError) in try await desk.start(body) }
        }
        group.post("answer") { request, _ in
            let body = try await request.smallBody()
            return try await Self.reply { () async throws(HearingTestError) in try await desk.answer(body) }
        }
        group.delete { _, _ in await desk.cancel() }
    }

    /// The desk's refusals as HTTP statuses.
    static func reply(_ work: () async throws(HearingTestError) -> HearingTestStep) async throws -> HearingTestStep {
        do {
            return try await work()
        } catch {
            switch error {
            case .invalid(let message): throw HTTPError(.badRequest, message: message)
            case .busy(let message): throw HTTPError(.conflict, message: message)
            case .unavailable(let message): throw HTTPError(.serviceUnavailable, message: message)
            }
        }
    }
}

extension HearingTestStatus: ResponseEncodable {}
extension HearingTestStep: ResponseEncodable {}
