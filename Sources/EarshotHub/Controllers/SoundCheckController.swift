import EarshotHubClient
import Foundation
import Hummingbird

/// `/api/soundcheck?rate=R&roomTone=S`: a take from the browser's microphone, checked as
/// `earshot soundcheck` checks a file.
struct SoundCheckController {
    func addRoutes(to group: RouterGroup<HubRequestContext>) {
        group.post(use: check)
    }

    @Sendable func check(_ request: Request, context: HubRequestContext) async throws -> SoundCheckDesk.Reply {
        let query = request.uri.queryParameters
        let rate: Double, roomTone: Double
        do {
            (rate, roomTone) = try SoundCheckDesk.parameters(rate: query["rate"].map(String.init), roomTone: query["roomTone"].map(String.init))
        } catch {
            throw HTTPError(.badRequest, message: error.message)
        }
        var request = request
        let limit = SoundCheckDesk.maximumBytes(rate: rate)
        guard let body = try? await request.collectBody(upTo: limit) else {
            throw HTTPError(.contentTooLarge, message: "a take is at most \(Int(SoundCheckDesk.longestSeconds)) s: the body is larger than \(limit) bytes or incomplete")
        }
        let bytes = Array(body.readableBytesView)
        // Seconds of analysis: off the event loop.
        let outcome = await Task.detached { () -> Result<SoundCheckDesk.Reply, HubRequestError> in
            Result { () throws(HubRequestError) in try SoundCheckDesk.check(bytes, rate: rate, roomToneSeconds: roomTone) }
        }.value
        switch outcome {
        case .success(let reply): return reply
        case .failure(let error): throw HTTPError(.badRequest, message: error.message)
        }
    }
}

extension SoundCheckDesk.Reply: ResponseEncodable {}
