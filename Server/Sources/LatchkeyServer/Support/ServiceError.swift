/// A rule a request broke, decided by a service; the routes turn it into an HTTP error.
///
/// A struct, not an enum, so kinds can be added without breaking code that switches over them (as jwt-kit's and
/// postgres-nio's errors are): compare ``kind`` with a static value, or match with `catch ServiceError.budgetExhausted`.
/// Messages are shown to callers: they never contain a token or secret.
public struct ServiceError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What kind of rule was broken; the message says more.
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }

        /// The refresh token is unknown, expired, revoked or was reused.
        public static let invalidGrant = Kind("invalidGrant")
        /// The device exists and the request did not prove it owns it.
        public static let invalidDeviceSecret = Kind("invalidDeviceSecret")
        /// The token is valid but cannot do this.
        public static let forbidden = Kind("forbidden")
        /// The named thing does not exist.
        public static let notFound = Kind("notFound")
        /// The user's budget is used up for the current period.
        public static let budgetExhausted = Kind("budgetExhausted")
        /// The identity belongs to another user; nothing was merged.
        public static let identityAlreadyLinked = Kind("identityAlreadyLinked")
        /// An identity provider's endpoint refused or failed; nothing was changed.
        public static let upstream = Kind("upstream")
        /// The action needs a recent sign-in (linking, unlinking, deleting the account).
        public static let reauthenticationRequired = Kind("reauthenticationRequired")
        /// The device ID was claimed through `users/register` (it signs in with access codes), not by a device.
        public static let deviceIDClaimed = Kind("deviceIDClaimed")
        /// The user was deleted; its ID cannot be used again unless support frees it.
        public static let userDeleted = Kind("userDeleted")
        /// The change would leave the account with no way to sign in.
        public static let lastSignInMethod = Kind("lastSignInMethod")

        public var description: String { self.name }
    }

    /// What kind of rule was broken.
    public let kind: Kind
    /// The message shown to the caller.
    public let message: String

    private init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { self.message }

    /// The refresh token is unknown, expired, revoked or was reused.
    public static func invalidGrant(_ message: String) -> ServiceError { ServiceError(.invalidGrant, message) }
    /// The token is valid but cannot do this.
    public static func forbidden(_ message: String) -> ServiceError { ServiceError(.forbidden, message) }
    /// The named thing does not exist.
    public static func notFound(_ message: String) -> ServiceError { ServiceError(.notFound, message) }
    /// An identity provider's endpoint refused or failed; nothing was changed.
    public static func upstream(_ message: String) -> ServiceError { ServiceError(.upstream, message) }
    /// The change would leave the account with no way to sign in.
    public static func lastSignInMethod(_ message: String) -> ServiceError { ServiceError(.lastSignInMethod, message) }

    /// The action needs a recent sign-in (linking, unlinking, deleting the account).
    public static let reauthenticationRequired = ServiceError(
        .reauthenticationRequired,
        "This needs a recent sign-in: sign in again (or send a DPoP proof made with this session's device key for this access token), then retry."
    )
    /// The device ID was claimed through `users/register` (it signs in with access codes), not by a device.
    public static let deviceIDClaimed = ServiceError(
        .deviceIDClaimed,
        "This device ID belongs to an account registered through users/register, which signs in with an access code. "
            + "A new install should use a new device ID."
    )
    /// The user was deleted; its ID cannot be used again unless support frees it.
    public static let userDeleted = ServiceError(
        .userDeleted,
        "The account with this ID was deleted; the ID cannot be used again. Use a new device ID."
    )
    /// The identity belongs to another user; nothing was merged.
    public static let identityAlreadyLinked = ServiceError(
        .identityAlreadyLinked,
        "This identity is already linked to another account; sign in with it instead, or unlink it there first."
    )
    /// The user's budget is used up for the current period.
    public static let budgetExhausted = ServiceError(.budgetExhausted, "The budget for this period is used up.")
    /// The device exists and the request did not prove it owns it.
    public static let invalidDeviceSecret = ServiceError(
        .invalidDeviceSecret,
        "This device ID is already registered: prove it is this device, with a DPoP proof made with its key or the device_secret "
            + "from its first registration."
    )

    /// Matches any error of the same kind, so `catch ServiceError.budgetExhausted` works.
    public static func ~= (pattern: ServiceError, error: any Error) -> Bool {
        (error as? ServiceError)?.kind == pattern.kind
    }
}
