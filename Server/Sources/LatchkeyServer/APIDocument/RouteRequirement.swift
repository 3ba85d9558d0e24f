import Hummingbird

/// What a route needs before its handler runs — a token, a proof, a limit — as middleware on the route's own group,
/// together with what that means for the route's entry in the API document (a header, a status, security).
package struct RouteRequirement<Context: RequestContext>: Sendable {
    let middleware: [any MiddlewareProtocol<Request, Response, Context>]
    let document: @Sendable (inout APIOperation) -> Void

    package init(_ middleware: [any MiddlewareProtocol<Request, Response, Context>], document: @escaping @Sendable (inout APIOperation) -> Void) {
        self.middleware = middleware
        self.document = document
    }
}

extension RouteRequirement {
    /// A route that issues session tokens (a sign-in, a refresh): documents 403 `user_disabled` and the claims hook's 503.
    static var issuesSessionTokens: RouteRequirement { RouteRequirement([]) { $0.documentIssuingSessionTokens() } }
}
