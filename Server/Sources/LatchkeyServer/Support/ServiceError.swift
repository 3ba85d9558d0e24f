import LatchkeyAPI

/// A rule a request broke, decided by a service: the server's one error type below the routes. Its HTTP status, error
/// code and headers are mapped in one place, `APIError.translating(_:)`; services never choose a status.
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
        /// The request is well-formed JSON but a value in it is not acceptable (``code`` says which rule).
        public static let invalidRequest = Kind("invalidRequest")
        /// The email address is not one the server can mail.
        public static let invalidEmail = Kind("invalidEmail")
        /// The password breaks the password policy (``reason`` says which rule).
        public static let weakPassword = Kind("weakPassword")
        /// Another account has this address (answered only with `email.reveal-existing`).
        public static let emailTaken = Kind("emailTaken")
        /// The account has an email address and password already.
        public static let emailAlreadySet = Kind("emailAlreadySet")
        /// An unknown address and a wrong password alike.
        public static let invalidCredentials = Kind("invalidCredentials")
        /// The password is right and the address is not verified yet.
        public static let emailNotVerified = Kind("emailNotVerified")
        /// A mailed code or link is wrong, expired or spent.
        public static let invalidCode = Kind("invalidCode")
        /// Too many failed sign-ins for the account (``retryAfter`` says for how long).
        public static let tooManyAttempts = Kind("tooManyAttempts")
        /// Every password-hashing thread is busy and the queue is full.
        public static let busy = Kind("busy")
        /// No SMTP relay is configured, so the email routes are off.
        public static let emailNotConfigured = Kind("emailNotConfigured")
        /// The `mfa_token` is unknown, expired, used, or spent by wrong codes.
        public static let invalidMFAToken = Kind("invalidMFAToken")
        /// The user has a second factor and the session has not proved it recently.
        public static let aal2Required = Kind("aal2Required")
        /// The user has a confirmed second factor already.
        public static let factorExists = Kind("factorExists")
        /// Passkeys are off: `passkeys.rp-id` is not set.
        public static let passkeysDisabled = Kind("passkeysDisabled")
        /// A passkey's registration or assertion did not verify, or its challenge is unknown, expired, used or another's.
        public static let invalidPasskey = Kind("invalidPasskey")
        /// No passkey has the credential ID (or its user is gone).
        public static let unknownCredential = Kind("unknownCredential")
        /// A passkey with the credential ID is registered already.
        public static let passkeyExists = Kind("passkeyExists")
        /// The user is disabled (by the app's backend): no sign-in or refresh until enabled.
        public static let userDisabled = Kind("userDisabled")
        /// The claims hook failed and `hooks.claims.on-failure` is `refuse`; nothing was changed.
        public static let claimsHookFailed = Kind("claimsHookFailed")

        public var description: String { self.name }
    }

    /// What kind of rule was broken.
    public let kind: Kind
    /// The message shown to the caller.
    public let message: String
    /// The error code of an ``Kind/invalidRequest`` (`invalid_request`, `invalid_key`); nil for the other kinds, whose
    /// code follows from the kind.
    public let code: ErrorCode?
    /// Which rule was broken, for kinds that say (``Kind/weakPassword``: `too_short`, `common`, …): the envelope's `reason`.
    public let reason: String?
    /// Seconds until trying again can succeed (``Kind/tooManyAttempts``, ``Kind/busy``): the answer's `Retry-After`.
    public let retryAfter: Int?

    private init(_ kind: Kind, _ message: String, code: ErrorCode? = nil, reason: String? = nil, retryAfter: Int? = nil) {
        self.kind = kind
        self.message = message
        self.code = code
        self.reason = reason
        self.retryAfter = retryAfter
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

    /// A value in the request is not acceptable: 400 with `code` (`invalid_request` unless another code says more).
    public static func invalidRequest(_ message: String, code: ErrorCode = .invalidRequest) -> ServiceError {
        ServiceError(.invalidRequest, message, code: code)
    }
    /// The email address is not one the server can mail.
    public static func invalidEmail(_ message: String) -> ServiceError { ServiceError(.invalidEmail, message) }
    /// The password breaks the policy's rule `reason`.
    public static func weakPassword(_ reason: WeakPasswordReason) -> ServiceError {
        ServiceError(.weakPassword, Self.message(for: reason), reason: reason.rawValue)
    }
    /// Another account has this address.
    public static let emailTaken = ServiceError(.emailTaken, "An account with this email address already exists; sign in instead.")
    /// The account has an email address and password already.
    public static let emailAlreadySet = ServiceError(
        .emailAlreadySet, "This account already has an email address and password; change the password instead.")
    /// An unknown address and a wrong password alike.
    public static let invalidCredentials = ServiceError(.invalidCredentials, "The email address or password is not right.")
    /// The password is right and the address is not verified yet.
    public static let emailNotVerified = ServiceError(
        .emailNotVerified, "Please verify your email address first: use the code or link we mailed (or ask for a new one).")
    /// A mailed code or link is wrong, expired or spent.
    public static let invalidCode = ServiceError(
        .invalidCode, "This code or link is wrong, expired or already used; ask for a new one if it keeps failing.")
    /// Too many failed sign-ins for the account; `retryAfter` seconds until the oldest leaves the window.
    public static func tooManyAttempts(retryAfter: Int) -> ServiceError {
        ServiceError(
            .tooManyAttempts, "Too many failed sign-ins for this account; try again in \(retryAfter) seconds.", retryAfter: retryAfter)
    }
    /// Every password-hashing thread is busy and the queue is full.
    public static let busy = ServiceError(.busy, "The server is busy checking passwords; try again in a moment.", retryAfter: 1)
    /// No SMTP relay is configured, so the email routes are off.
    public static let emailNotConfigured = ServiceError(
        .emailNotConfigured, "Email and password accounts are off on this server: set smtp.host (and email.from) to turn them on.")

    /// A TOTP or recovery code that is wrong or was accepted before: one answer for both.
    public static let invalidSecondFactorCode = ServiceError(.invalidCode, "This code is not right, or it was used already.")
    /// The `mfa_token` is unknown, expired, used, or spent by wrong codes.
    public static let invalidMFAToken = ServiceError(
        .invalidMFAToken, "This sign-in is no longer waiting for a code (expired, finished, or too many wrong codes): sign in again.")
    /// A sensitive action of a user with a second factor, from a session that has not proved it recently.
    public static let aal2Required = ServiceError(
        .aal2Required,
        "This needs a code from your authenticator app first: verify one with POST /api/v1/mfa/verify (with this session's Bearer), then try again.")
    /// The user has a confirmed TOTP factor already.
    public static let factorExists = ServiceError(.factorExists, "This account has an authenticator app set up already; remove it first.")
    /// Passkeys are off: `passkeys.rp-id` is not set.
    public static let passkeysDisabled = ServiceError(.passkeysDisabled, "Passkeys are off: set passkeys.rp-id.")
    /// A passkey's registration or assertion did not verify (the message says which check, never a credential).
    public static func invalidPasskey(_ message: String) -> ServiceError { ServiceError(.invalidPasskey, message) }
    /// No passkey has the credential ID, or its user is gone.
    public static let unknownCredential = ServiceError(
        .unknownCredential, "No account has this passkey: it was removed, or its account was deleted. Sign in another way.")
    /// A passkey with the credential ID is registered already.
    public static let passkeyExists = ServiceError(
        .passkeyExists, "This passkey is registered already: the authenticator holds one for this site. Use it to sign in.")
    /// The user is disabled: every sign-in and refresh is refused until the app's backend enables them.
    public static let userDisabled = ServiceError(.userDisabled, "This account is disabled; it cannot sign in until it is enabled again.")
    /// The claims hook failed (`hooks.claims.on-failure` `refuse`): no token was issued and nothing changed.
    public static let claimsHookFailed = ServiceError(
        .claimsHookFailed, "The app's claims hook did not answer in time or answered wrongly; nothing was changed. Try again later.")
    /// Too many wrong second-factor codes for the user; `retryAfter` seconds until the oldest leaves the window.
    public static func tooManySecondFactorAttempts(retryAfter: Int) -> ServiceError {
        ServiceError(
            .tooManyAttempts, "Too many wrong codes for this account; try again in \(retryAfter) seconds.", retryAfter: retryAfter)
    }

    /// What a ``weakPassword(_:)`` error says for `reason`.
    static func message(for reason: WeakPasswordReason) -> String {
        switch reason {
        case .tooShort: "The password is too short: use at least \(PasswordPolicy.minimumLength) characters."
        case .tooLong: "The password is too long: use at most \(PasswordPolicy.maximumLength) characters."
        case .sameAsEmail: "The password cannot be your email address."
        case .common: "This password is one of the most common ones; choose another."
        default: "The password is not accepted (\(reason))."
        }
    }

    /// Matches any error of the same kind, so `catch ServiceError.budgetExhausted` works.
    public static func ~= (pattern: ServiceError, error: any Error) -> Bool {
        (error as? ServiceError)?.kind == pattern.kind
    }
}
