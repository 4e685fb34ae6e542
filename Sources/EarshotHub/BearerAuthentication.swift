import Hummingbird

/// Lets a request through only with one of the hub's tokens: `Authorization: Bearer T`, or
/// `?token=T` / `?auth=T` for clients that cannot set headers (a browser's EventSource and
/// WebSocket, the ntfy app). The tokens file is read on every request, so a token made with
/// `earshot token create` while the hub runs works at once.
struct BearerAuthentication<Context: RequestContext>: RouterMiddleware {
    let tokens: TokenStore

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let header = request.headers[.authorization].flatMap { value -> String? in
            value.hasPrefix("Bearer ") ? String(value.dropFirst(7)) : nil
        }
        let query = request.uri.queryParameters
        let given = header ?? query["token"].map(String.init) ?? query["auth"].map(String.init)
        guard let given, TokenStore.matches(given, try tokens.all()) else {
            throw HTTPError(.unauthorized, message: "a valid bearer token is needed (earshot token create)")
        }
        return try await next(request, context)
    }
}
