import Hummingbird
import LatchkeyAPI

/// The signed-in user's own account: `GET /api/v1/users/me/sessions`, `DELETE /api/v1/users/me/sessions/{id}` and
/// `GET /api/v1/users/me/export`.
struct AccountRoutes {
    let account: AccountService
    let sessions: SessionService
    let verifier: AccessTokenVerifier
    let dpop: DPoPVerifier

    func add(to api: APIRoutes<LatchkeyRequestContext>) {
        api.add(Self.list, requirements: [.token(self.verifier)]) { _, context in
            Answer(try await self.account.sessions(for: try context.requireIdentity()), headers: TokenAnswerHeaders.noStore)
        }
        api.add(Self.end, requirements: [.token(self.verifier)]) { _, context in
            try await self.account.endSession(id: try context.parameters.require("id"), for: try context.requireIdentity())
            return Response(status: .noContent)
        }
        api.add(
            Self.export,
            requirements: [
                .proof(self.dpop),
                .token(
                    self.verifier, kinds: [.session, .external],
                    refusal: "Only the account's own session (or identity provider token) can export it."),
            ]
        ) { _, context in
            let token = try context.requireIdentity()
            try await self.sessions.requireRecentAuthentication(token, proof: context.proof)
            return Answer(try await self.account.export(for: token), headers: TokenAnswerHeaders.noStore)
        }
    }
}

extension AccountRoutes {
    static let list = APIOperation(
        .get, "/api/v1/users/me/sessions", id: "listMySessions", tag: "Users", summary: "Where the calling user is signed in",
        description: """
            The user's live sessions, newest first: each one's `id` (its tokens' `sid`), `device_id` (null for a session of no \
            device), `method` (how it began: `device`, `password`, `apple`, `google`, `passkey`, `access_code`, `federated`, `email`), \
            `created_at`, `last_used_at` (the UTC day it was created or last refreshed, `YYYY-MM-DD`: never the moment) and `current` \
            (true for the session of the presented token only). Ended sessions (logged out, revoked, expired) are not listed. Takes the \
            tokens `users/me` takes; a guest token lists none.
            """,
        outcomes: [.init(200, "The live sessions.", body: AccountSessionsResponse.self, headers: ["Cache-Control"]), .unavailable])

    static let end = APIOperation(
        .delete, "/api/v1/users/me/sessions/{id}", id: "endMySession", tag: "Users", summary: "End one of the calling user's sessions",
        description: """
            Ends the session as `logout` ends one: its refresh token stops working, its access tokens are refused at once here (and \
            by other processes as soon as they read the revocation feed), and its event sockets hear `session.revoked` with reason \
            `logout` and close. The presented token's own session may be ended too (that signs this app out). Takes the tokens \
            `users/me` takes.
            """,
        parameters: [.init("id", in: .path, required: true, "The session's `id` (its tokens' `sid`).")],
        outcomes: [
            .init(204, "The session is ended."),
            .notFound("Not one of the caller's live sessions (another user's, ended already, or not a session ID): nothing changed."),
            .unavailable,
        ])

    static let export = APIOperation(
        .get, "/api/v1/users/me/export", id: "exportMyAccount", tag: "Users", summary: "Everything stored about the calling user",
        description: """
            A JSON document of everything Latchkey holds about the user, for GDPR Art. 15 and 20 requests, with exactly these \
            top-level keys: `user` (profile, email address, `app_metadata`, `passkeys` and `second_factors` — names, kinds and \
            dates), `identities` (provider, subject and the provider's address; never its tokens), `devices`, \
            `sessions` (ended ones included, with why they ended), `budget` and `usage`, `audit_events` whose target is the user or \
            one of its sessions or devices. No token, secret or hash of one. \
            Needs a recent sign-in, as deleting the account does: a session begun within `tokens.recent-authentication` seconds \
            (600), or a DPoP proof made with the key the session is bound to, naming this access token in `ath`; otherwise 403 \
            `reauthentication_required`.
            """,
        outcomes: [
            .init(200, "The export.", body: AccountExport.self, headers: ["Cache-Control"]),
            .forbidden("A guest token or access code (`forbidden`), or no recent sign-in (`reauthentication_required`)."),
            .unavailable,
        ])
}
