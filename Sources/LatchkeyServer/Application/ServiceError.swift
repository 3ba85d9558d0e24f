/// A rule a request broke, decided by a service; the routes turn it into an HTTP error.
///
/// Messages are shown to callers: they never contain a token or secret.
@available(LatchkeyServer 1.0, *)
public enum ServiceError: Error, Equatable, CustomStringConvertible {
    /// The refresh token is unknown, expired, revoked or was reused.
    case invalidGrant(String)
    /// The device exists and the request did not prove it owns it.
    case invalidDeviceSecret
    /// The token is valid but cannot do this.
    case forbidden(String)
    /// The named thing does not exist.
    case notFound(String)
    /// The user's budget is used up for the current period.
    case budgetExhausted
    /// The identity belongs to another user; nothing was merged.
    case identityAlreadyLinked
    /// An identity provider's endpoint refused or failed; nothing was changed.
    case upstream(String)

    public var description: String {
        switch self {
        case .invalidGrant(let message), .forbidden(let message), .notFound(let message), .upstream(let message): message
        case .identityAlreadyLinked:
            "This identity is already linked to another account; sign in with it instead, or unlink it there first."
        case .budgetExhausted: "The budget for this period is used up."
        case .invalidDeviceSecret:
            "This device ID is already registered: send its device_secret, or sign in with an access code."
        }
    }
}
