/// Something that happened which the app may want to show or log (see ``LatchkeySession/events()``). No case carries a
/// token or a secret.
public enum LatchkeyEvent: Sendable, Equatable {
    /// The auth state changed.
    case stateChanged(AuthState)
    /// A request was refused with 429 (and not retried, or retried once after a `Retry-After` of at most 5 seconds).
    case rateLimited(RateLimitInfo)
    /// This install now has a new device identity (device UUID and key); the old one cannot be used again.
    case deviceIdentityReplaced(DeviceIdentityChange)
    /// This session's refresh replaced its tokens.
    case tokenRefreshed(AuthSession)
    /// The session ended, and why.
    case signedOut(SignOutReason)
    /// The session now in use is one another process stored in the shared secure store (an app extension refreshed or
    /// signed in, a second CLI run): newer tokens of the same session, or the next user's sign-in.
    case sessionAdopted(AuthSession)
    /// The secure store could not be written (or read) when it had to keep what the server just issued; the session
    /// keeps it in memory and writes it at its next use.
    case storeUnavailable(StoreProblem)
}

/// Why a session ended (``LatchkeyEvent/signedOut(_:)``).
public enum SignOutReason: String, Sendable, Equatable {
    /// The app signed out (``LatchkeySession/signOut(scope:)``, ``LatchkeySession/deleteAccount()``).
    case requested
    /// The server rejected the refresh token, or a token without refresh expired: sign in again.
    case sessionExpired
    /// Another process (an app extension, another run of a CLI) signed out in the shared secure store, or, with a
    /// ``LatchkeySession/Configuration/tokenProvider``, the user signed out of the identity provider
    /// (``LatchkeySession/followProviderChanges(_:)``).
    case signedOutElsewhere
    /// The device identity was replaced (see ``LatchkeyEvent/deviceIdentityReplaced(_:)``).
    case deviceIdentityReplaced
    /// The server revoked the session and said so over the live event stream (``LiveEvent/sessionRevoked(_:)``): a
    /// sign-out elsewhere, a reused refresh token, a deleted user, or support. Also after a password reset of the
    /// session's user here (``LatchkeySession/resetPassword(token:newPassword:)``), which revokes all of its sessions.
    case revoked
}

/// Why the device identity was replaced.
public enum DeviceIdentityChange: String, Sendable, Equatable {
    /// The server knows the device UUID as another account's (claimed through `users/register`, or its account was
    /// deleted): this install continues under a new one.
    case idUnavailable
    /// This install got its device UUID back from a backup (UserDefaults) without the device's key (a `ThisDeviceOnly`
    /// Keychain item): the server knows that UUID as the original phone's, so this phone continues under a new one.
    case restoredFromBackup
    /// The account of this device was deleted; its ID is retired.
    case accountDeleted
    /// The app asked (``LatchkeySession/resetDeviceIdentity()``).
    case requested
}
