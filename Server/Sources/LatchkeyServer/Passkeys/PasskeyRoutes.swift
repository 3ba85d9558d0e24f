import Hummingbird
import LatchkeyAPI

/// Passkeys: `POST /api/v1/passkeys/register/options` and `POST /api/v1/passkeys/register` (a signed-in user adds one),
/// `POST /api/v1/passkeys/authenticate/options` and `POST /api/v1/passkeys/authenticate` (sign in with one),
/// `GET /api/v1/passkeys`, `PATCH /api/v1/passkeys/{id}` and `DELETE /api/v1/passkeys/{id}`. While `passkeys.rp-id` is
/// not set every one of them answers 404 `passkeys_disabled`, before anything else is looked at.
struct PasskeyRoutes {
    let passkeys: PasskeyService
    let verifier: AccessTokenVerifier
    let dpop: DPoPVerifier
    let limiter: RateLimiter
    let trustedProxies: Set<String>

    /// Every kind of token but a guest's: a user's own.
    static let userKinds: Set<TokenKind> = [.session, .accessCode, .external]

    private var on: RouteRequirement<LatchkeyRequestContext> { .passkeysOn(self.passkeys.configuration) }

    private var limited: RouteRequirement<LatchkeyRequestContext> {
        .limited(
            by: self.passkeys.configuration.limit, limiter: self.limiter, trustedProxies: self.trustedProxies,
            counting: "requests (both options routes and sign-ins together)")
    }

    private func session(_ refusal: String) -> RouteRequirement<LatchkeyRequestContext> {
        .token(self.verifier, kinds: [.session], refusal: refusal)
    }

    private var user: RouteRequirement<LatchkeyRequestContext> {
        .token(self.verifier, kinds: Self.userKinds, refusal: "A guest has no passkeys: sign in as a user first.")
    }

    func add(to api: APIRoutes<LatchkeyRequestContext>) {
        api.add(
            Self.registrationOptions,
            requirements: [self.on, .proof(self.dpop), self.limited, self.session("Only a signed-in user's own session can add a passkey.")]
        ) { _, context in
            Answer.tokens(try await self.passkeys.registrationOptions(token: try context.requireIdentity(), proof: context.proof))
        }
        api.add(Self.register, requirements: [self.on, self.session("Only the session that asked for the options can add the passkey.")]) {
            request, context in
            let body = try await request.decode(as: PasskeyRegistrationRequest.self, context: context)
            return Answer(try await self.passkeys.register(body, token: try context.requireIdentity()), status: .created)
        }
        api.add(Self.authenticationOptions, requirements: [self.on, self.limited]) { _, _ in
            Answer.tokens(try await self.passkeys.authenticationOptions())
        }
        api.add(Self.authenticate, requirements: [self.on, .proof(self.dpop), self.limited, .issuesSessionTokens]) { request, context in
            let body = try await request.decode(as: PasskeyAuthenticationRequest.self, context: context)
            let deviceID = try body.deviceID.map { try canonicalUUID($0, field: "device_id") }
            return Answer.tokens(try await self.passkeys.signIn(body, deviceID: deviceID, proof: context.proof))
        }
        api.add(Self.list, requirements: [self.on, self.user]) { _, context in
            Answer(try await self.passkeys.passkeys(userID: try context.requireIdentity().userID))
        }
        api.add(Self.rename, requirements: [self.on, self.user]) { request, context in
            let body = try await request.decode(as: PasskeyRenameRequest.self, context: context)
            return Answer(
                try await self.passkeys.rename(id: try context.parameters.require("id"), to: body.name, userID: try context.requireIdentity().userID))
        }
        api.add(Self.delete, requirements: [self.on, .proof(self.dpop), self.user]) { _, context in
            try await self.passkeys.remove(id: try context.parameters.require("id"), token: try context.requireIdentity(), proof: context.proof)
            return Response(status: .noContent)
        }
    }
}

/// Answers 404 `passkeys_disabled` while passkeys are off, before any other requirement of the route runs.
struct PasskeysOnMiddleware: RouterMiddleware {
    typealias Context = LatchkeyRequestContext
    let isEnabled: Bool

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard self.isEnabled else { throw ServiceError.passkeysDisabled }
        return try await next(request, context)
    }
}

extension RouteRequirement where Context == LatchkeyRequestContext {
    /// The route is a passkey route: 404 `passkeys_disabled` while `passkeys.rp-id` is not set.
    static func passkeysOn(_ configuration: PasskeyConfiguration) -> RouteRequirement {
        RouteRequirement([PasskeysOnMiddleware(isEnabled: configuration.isEnabled)]) { operation in
            operation.add(.notFound("`passkeys_disabled`: passkeys are off (`passkeys.rp-id` is not set)."))
        }
    }
}
