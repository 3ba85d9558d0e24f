/// How one request is authenticated.
///
/// Every policy but ``none`` sends credentials (the access token, or the device UUID that is the user's ID), which go
/// only to the Latchkey server and ``LatchkeySession/Configuration/apiOrigins``.
public enum AuthPolicy: String, Sendable, Equatable, CaseIterable {
    /// No credentials (health, `users/register`, `register-device`, `refresh`), to any host.
    case none
    /// `Authorization: Bearer <access token>`; a 401 is answered by one refresh and one retry.
    case bearer
    /// `X-Device-ID: <device UUID>` only, never an `Authorization` header (Stori's asset endpoints). The device UUID is
    /// read from memory or the defaults mirror, not the Keychain.
    case deviceID
    /// Both the bearer and `X-Device-ID`.
    case bearerAndDeviceID
    /// The access token in the query as `?token=<access token>`, no header (WebSocket URLs).
    case tokenInQuery
    /// The bearer, and `X-Device-ID` as well while the session is a guest's (seed 003: guests are rate-limited by
    /// device, signed-in users by user, and the backend wants the header for guests only).
    case deviceIDForGuests

    /// Whether the policy sends the access token.
    var usesToken: Bool { self != .none && self != .deviceID }
}
