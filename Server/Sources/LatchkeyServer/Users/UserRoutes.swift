import Hummingbird
import LatchkeyAPI

/// `POST /api/v1/users/register`, the profile at `GET /api/v1/users/me` and `GET /api/v1/auth/me`, and
/// `DELETE /api/v1/users/me`.
struct UserRoutes {
    let users: UserService
    let sessions: SessionService
    let verifier: AccessTokenVerifier
    let dpop: DPoPVerifier
    let limiter: RateLimiter
    let limits: AbuseLimits

    func add(to api: APIRoutes<LatchkeyRequestContext>) {
        api.add(
            Self.register,
            requirements: [
                .limited(by: self.limits.registerUser, limiter: self.limiter, trustedProxies: self.limits.trustedProxies, counting: "claims")
            ]
        ) { request, context in
            let body = try await request.decode(as: RegisterUserRequest.self, context: context)
            let userID = try canonicalUUID(body.userID, field: "user_id")
            let created = try await self.users.register(userID: userID)
            return Answer(RegisterUserResponse(userID: userID, created: created), status: created ? .created : .ok)
        }
        for operation in [Self.profile(path: "/api/v1/auth/me", id: "getAuthMe"), Self.profile(path: "/api/v1/users/me", id: "getUsersMe")] {
            api.add(operation, requirements: [.token(self.verifier)]) { _, context in
                Answer(try await self.users.profile(for: try context.requireIdentity()))
            }
        }
        api.add(
            Self.delete,
            requirements: [
                .proof(self.dpop),
                .token(
                    self.verifier, kinds: [.session, .external],
                    refusal: "Only the account's own session (or identity provider token) can delete it."),
            ]
        ) { _, context in
            let token = try context.requireIdentity()
            try await self.sessions.requireRecentAuthentication(token, proof: context.proof)
            try await self.sessions.requireStepUp(token)
            let (deleted, apple) = try await self.users.delete(userID: token.userID)
            return Answer(AccountDeletionResponse(userID: deleted.userID, revokedSessions: deleted.sessionIDs.count, appleTokensRevoked: apple))
        }
    }
}

extension UserRoutes {
    static let register = APIOperation(
        .post, "/api/v1/users/register", id: "registerUser", tag: "Users", summary: "Register a device user by UUID (idempotent)",
        description:
            "Creates a device user whose user ID is the given UUID (the app's device UUID); no token is needed and none is returned. "
            + "Idempotent: 201 `created: true` when this call created the user, 200 `created: false` when it existed. Anonymous callers "
            + "learn only `{user_id, created}`. Such a user signs in with access codes; `register-device` for its UUID answers 409 "
            + "`device_id_claimed`. A deleted user's ID is retired: 409 `user_deleted`.",
        requestBody: RegisterUserRequest.self, requestExample: #"{"user_id": "0F8FAD5B-D9CB-469F-A165-70867728950E"}"#,
        outcomes: [
            .init(201, "The user was created by this call.", body: RegisterUserResponse.self),
            .init(200, "The user existed; nothing changed.", body: RegisterUserResponse.self), .badRequest(),
            .conflict("The ID belonged to a deleted user (`user_deleted`); it cannot be registered again unless support frees it."), .tooLarge,
            .unavailable,
        ])

    static func profile(path: String, id: String) -> APIOperation {
        APIOperation(
            .get, path, id: id, tag: "Users", summary: "The calling user's profile",
            description:
                "The profile of the user the bearer stands for (`/api/v1/auth/me` and `/api/v1/users/me` are the same): user ID, kind, "
                + "creation time, the kind of the presented token, its session ID, linked identities, registered devices, the budget, and "
                + "the email address that signs in with a password with `email_verified` (both absent without one). "
                + "Takes sessions, access codes, guest tokens (whose profile is the guest's: nothing stored) and identity providers' tokens. "
                + "The token of a user deleted after it was issued is 401. A profile may be answered from one read up to "
                + "`cache.profile-ttl` seconds (default 2) before when another process changed it; this server's own writes show at once.",
            outcomes: [.init(200, "The profile.", body: UserProfile.self), .unavailable])
    }

    static let delete = APIOperation(
        .delete, "/api/v1/users/me", id: "deleteMyAccount", tag: "Users", summary: "Delete the calling user's account",
        description:
            "Deletes the user with its devices, identities, sessions, refresh tokens, access codes and budget; its tokens stop working at "
            + "once here and on other processes as soon as they read the revocation feed. Apple refresh tokens stored for the user are "
            + "revoked at Apple first (App Store guideline 5.1.1(v)); if Apple does not confirm, nothing is deleted (502 `upstream_error`). "
            + "Needs a recent sign-in: a session begun within `tokens.recent-authentication` seconds (600), or a DPoP proof made with the "
            + "key the session is bound to, naming this access token in `ath` (each proof once); otherwise 403 `reauthentication_required`. "
            + "The user's ID is retired (registering it again is 409 `user_deleted`)."
            + " A user with a confirmed second factor also needs a session that proved it within `mfa.step-up-lifetime` (10 minutes; `POST /api/v1/mfa/verify` with the Bearer steps up): 403 `aal2_required` otherwise.",
        outcomes: [
            .init(200, "The account is gone.", body: AccountDeletionResponse.self),
            .forbidden(
                "A guest token or access code (`forbidden`), no recent sign-in (`reauthentication_required`), or no recent step-up (`aal2_required`)."
            ),
            .notFound("The user is gone already."), .badGateway("Apple did not confirm revoking the user's token; nothing was deleted."),
            .unavailable,
        ])
}
