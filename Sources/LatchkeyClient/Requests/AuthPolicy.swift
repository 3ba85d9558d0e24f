/// How one request is authenticated.
public enum AuthPolicy: String, Sendable, Equatable, CaseIterable {
    /// No credentials (health, `users/register`, `register-device`, `refresh`).
    case none
    /// `Authorization: Bearer <access token>`; a 401 is answered by one refresh and one retry.
    case bearer
    /// `X-Device-ID: <device UUID>` only, never an `Authorization` header (Stori's asset endpoints).
    case deviceID
    /// Both the bearer and `X-Device-ID` (guest requests, seed 003).
    case bearerAndDeviceID
    /// The access token in the query as `?token=<access token>`, no header (WebSocket URLs).
    case tokenInQuery

    /// Whether the policy sends the access token.
    var usesToken: Bool { self == .bearer || self == .bearerAndDeviceID || self == .tokenInQuery }
    /// Whether the policy sends `X-Device-ID`.
    var usesDeviceID: Bool { self == .deviceID || self == .bearerAndDeviceID }
}
