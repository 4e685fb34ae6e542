import EarshotHubClient
import Foundation
import Hummingbird

/// `/api/soundcheck?rate=R&roomTone=S`: a take from the browser's microphone;
/// `/api/soundcheck/file?name=N`: a recording file, checked as `earshot soundcheck FILE` checks it.
struct SoundCheckController {
    func addRoutes(to group: RouterGroup<HubRequestContext>) {
        group.post(use: check)
        group.post("file", use: checkFile)
    }

    @Sendable func checkFile(_ request: Request, context: HubRequestContext) async throws -> SoundCheckDesk.Reply {
        let name = request.uri.queryParameters["name"].map(String.init)
        var request = request
        guard let body = try? await request.collectBody(upTo: SoundCheckDesk.largestFileBytes) else {
            throw HTTPError(.contentTooLarge, message: "a recording sent from the page is at most \(SoundCheckDesk.largestFileBytes >> 20) MB: check a larger one with earshot soundcheck FILE")
        }
        let bytes = Array(body.readableBytesView)
        return try await Self.detached { () throws(HubRequestError) in try SoundCheckDesk.check(recording: bytes, name: name) }
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
        return try await Self.detached { () throws(HubRequestError) in try SoundCheckDesk.check(bytes, rate: rate, roomToneSeconds: roomTone) }
    }

    /// Seconds of analysis: off the event loop; a refused recording is a 400 with its reason.
    private static func detached(_ check: @escaping @Sendable () throws(HubRequestError) -> SoundCheckDesk.Reply) async throws -> SoundCheckDesk.Reply {
        let outcome = await Task.detached { Result { () throws(HubRequestError) in try check() } }.value
        switch outcome {
        case .success(let reply): return reply
        case .failure(let error): throw HTTPError(.badRequest, message: error.message)
        }
    }
}

extension SoundCheckDesk.Reply: ResponseEncodable {}
