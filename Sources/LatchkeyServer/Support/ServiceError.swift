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
    /// The action needs a recent sign-in (linking, unlinking, deleting the account).
    case reauthenticationRequired
    /// The device ID was claimed through `users/register` (it signs in with access codes), not by a device.
    case deviceIDClaimed
    /// The user was deleted; its ID cannot be used again unless support frees it.
    case userDeleted
    /// The change would leave the account with no way to sign in.
    case lastSignInMethod(String)

    public var description: String {
        switch self {
        case .invalidGrant(let message), .forbidden(let message), .notFound(let message), .upstream(let message), .lastSignInMethod(let message):
            message
        case .reauthenticationRequired:
            "This needs a recent sign-in: sign in again (or send a DPoP proof made with this session's device key), then retry."
        case .deviceIDClaimed:
            "This device ID belongs to an account registered through users/register, which signs in with an access code. "
                + "A new install should use a new device ID."
        case .userDeleted: "The account with this ID was deleted; the ID cannot be used again. Use a new device ID."
        case .identityAlreadyLinked:
            "This identity is already linked to another account; sign in with it instead, or unlink it there first."
        case .budgetExhausted: "The budget for this period is used up."
        case .invalidDeviceSecret:
            "This device ID is already registered: prove it is this device, with a DPoP proof made with its key or the device_secret "
                + "from its first registration."
        }
    }
}
