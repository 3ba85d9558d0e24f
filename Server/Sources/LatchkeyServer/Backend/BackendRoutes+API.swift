import HTTPTypes
import LatchkeyAPI

extension BackendRoutes {
    private static let idParameter = APIOperation.Parameter("id", in: .path, required: true, "The user's UUID.", schema: .string(format: "uuid"))
    private static let keyNote =
        "For the app's own server: `Authorization: Bearer <backend key>` (`backend.service-key`, or one of `backend.service-keys`), "
        + "compared in constant time with every configured key. Audited with the key's name (`backend`, `backend:<name>`). Without a "
        + "configured key the backend routes answer 404."
    private static let badID = APIOperation.Outcome.badRequest("The path's `id` is not a UUID (`invalid_uuid`).")

    static let show = APIOperation(
        .get, "/api/v1/backend/users/{id}", id: "backendGetUser", tag: "Backend", summary: "Read a user (backend)",
        description: "The user with identities, devices, `app_metadata` (`{}` when unset) and `disabled`. " + keyNote,
        parameters: [idParameter],
        outcomes: [
            .init(200, "The user.", body: BackendUserResponse.self), badID, .notFound("No such user (unknown or deleted)."), .unavailable,
        ])

    static let update = APIOperation(
        .patch, "/api/v1/backend/users/{id}", id: "backendUpdateUser", tag: "Backend", summary: "Set a user's app_metadata (backend)",
        description:
            "`{\"app_metadata\": {…}}`: a JSON object of at most `claims.max-bytes` bytes as compact JSON (default 2048); `{}` clears it. "
            + "Every access token issued afterwards carries it as the `app_metadata` claim; the user's event sockets hear `claims.changed` "
            + "(the SDK refreshes at once) and the webhook `user.updated` (`change: app_metadata`) is written with it. Anything else is 400 "
            + "`invalid_request` and nothing is stored. " + keyNote,
        parameters: [idParameter], requestBody: BackendUserUpdate.self, requestExample: #"{"app_metadata": {"plan": "pro", "team": "t_42"}}"#,
        outcomes: [
            .init(200, "Stored; the user as they are now.", body: BackendUserResponse.self),
            .badRequest("Not a UUID (`invalid_uuid`), not a JSON object, or larger than `claims.max-bytes` (`invalid_request`)."),
            .notFound("No such user."), .tooLarge, .unavailable,
        ])

    static let delete = APIOperation(
        .delete, "/api/v1/backend/users/{id}", id: "backendDeleteUser", tag: "Backend", summary: "Delete a user (backend)",
        description:
            "Deletes the user as support's deletion does: Apple's refresh tokens are revoked at Apple first (nothing is deleted unless "
            + "Apple confirms, 502), then the user with devices, identities, sessions and access codes; the ID is retired. " + keyNote,
        parameters: [idParameter],
        outcomes: [
            .init(204, "Deleted."), badID, .notFound("No such user."),
            .badGateway("Apple did not confirm revoking the user's Apple tokens; nothing was deleted."), .unavailable,
        ])

    static let revokeSessions = APIOperation(
        .post, "/api/v1/backend/users/{id}/revoke-sessions", id: "backendRevokeSessions", tag: "Backend",
        summary: "End every session of a user (backend)",
        description:
            "Ends every live session (reason `admin`: event sockets hear `session.revoked` and close); their refresh and access tokens "
            + "stop working. The user can sign in again. " + keyNote,
        parameters: [idParameter],
        outcomes: [
            .init(200, "How many live sessions were ended.", body: BackendRevokedSessions.self), badID, .notFound("No such user."), .unavailable,
        ])

    static let disable = APIOperation(
        .post, "/api/v1/backend/users/{id}/disable", id: "backendDisableUser", tag: "Backend", summary: "Disable a user (backend)",
        description:
            "In one transaction: the user is disabled, every live session ends (reason `disabled`: sockets hear `session.revoked` "
            + "`disabled`) and every access code, and the webhooks `user.disabled` and `session.revoked` are written. Until enabled every sign-in "
            + "(register-device, email login, Apple, providers' token exchange, access-code exchange, passkeys, MFA verify) and every "
            + "refresh answers 403 `user_disabled`. Disabling a disabled user changes nothing. " + keyNote,
        parameters: [idParameter],
        outcomes: [.init(200, "The user, disabled.", body: BackendUserResponse.self), badID, .notFound("No such user."), .unavailable])

    static let enable = APIOperation(
        .post, "/api/v1/backend/users/{id}/enable", id: "backendEnableUser", tag: "Backend", summary: "Enable a user (backend)",
        description:
            "Lets a disabled user sign in again (webhook `user.updated`, `change: enabled`); the sessions disabling ended stay ended. "
            + "Enabling a user who is not disabled changes nothing. " + keyNote,
        parameters: [idParameter],
        outcomes: [.init(200, "The user, enabled.", body: BackendUserResponse.self), badID, .notFound("No such user."), .unavailable])

    static let refreshClaims = APIOperation(
        .post, "/api/v1/backend/users/{id}/refresh-claims", id: "backendRefreshClaims", tag: "Backend",
        summary: "Make a user's apps refresh their tokens now (backend)",
        description:
            "The user's event sockets (in every process) hear `claims.changed` and the SDK refreshes at once, so new claims (from the "
            + "claims hook, say) reach the app without waiting for the access token to expire. " + keyNote,
        parameters: [idParameter], outcomes: [.init(204, "Told."), badID, .notFound("No such user."), .unavailable])
}
