import Hummingbird
import LatchkeyAPI

extension RouteRequirement where Context == LatchkeyRequestContext {
    /// A backend API key as `Authorization: Bearer`, compared in constant time with every configured key: 404
    /// `not_found` while none is configured (the API is off), 401 `invalid_token` for a missing or wrong one. The
    /// caller's audit name (`backend`, `backend:<name>`) is left in the context.
    static func backendKey(_ keys: BackendKeys) -> RouteRequirement {
        RouteRequirement([BackendKeyCheck(keys: keys)]) { operation in
            operation.security = .backendKey
            operation.add(.unauthorized("The backend key is missing or wrong; nothing was changed."))
            operation.add(.notFound("No such user, or the backend API is off (no `backend.service-key` is configured)."))
        }
    }
}

/// The configured backend keys, hashed once.
package struct BackendKeys: Sendable {
    let hashed: [(actor: String, hash: String)]

    /// `single` (`backend.service-key`) is audited as `backend`, each of `named` (`backend.service-keys`) as `backend:<name>`.
    init(single: String?, named: [(name: String, key: String)]) {
        let keys = (single.map { [("backend", $0)] } ?? []) + named.map { ("backend:" + $0.name, $0.key) }
        self.hashed = keys.map { ($0.0, Secret.hash($0.1)) }
    }

    /// The audit name of `presented`'s key; nil when it is none. Every key is compared, in constant time, whatever matched.
    func actor(presenting presented: String) -> String? {
        let hash = Secret.hash(presented)
        var found: String?
        for (actor, stored) in self.hashed {
            let matches = Secret.constantTimeEquals(hash, stored)
            if matches && found == nil { found = actor }
        }
        return found
    }
}

/// The middleware of ``RouteRequirement/backendKey(_:)``.
struct BackendKeyCheck: RouterMiddleware {
    typealias Context = LatchkeyRequestContext
    let keys: BackendKeys

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard !self.keys.hashed.isEmpty else {
            throw APIError(.notFound, .notFound, "The backend API is off on this server: set backend.service-key.")
        }
        guard let presented = request.bearerToken else { throw APIError.missingToken }
        guard let actor = self.keys.actor(presenting: presented) else { throw APIError.invalidToken("The backend key is not valid.") }
        var context = context
        context.backendActor = actor
        return try await next(request, context)
    }
}
