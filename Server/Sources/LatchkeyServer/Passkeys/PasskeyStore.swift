import Foundation

/// A user's passkey: a WebAuthn credential, its public key and its signature counter.
package struct PasskeyRecord: Sendable, Equatable {
    package var id: String
    package var userID: String
    /// The authenticator's credential ID (the assertion's `rawId`): unique among all users' passkeys.
    package var credentialID: [UInt8]
    /// The credential public key, the COSE_Key bytes the authenticator sent.
    package var publicKey: [UInt8]
    /// Its COSE algorithm (-7, -8, -257).
    package var algorithm: Int
    /// The last signature counter accepted; once above 0 every assertion must carry a greater one.
    package var signCount: UInt32
    /// The BE flag at registration: the passkey may be synced.
    package var backupEligible: Bool
    /// The BS flag of the last ceremony: the passkey is synced (iCloud Keychain, a password manager).
    package var backedUp: Bool
    package var aaguid: [UInt8]
    /// `none` or `packed`.
    package var attestationFormat: String
    /// Hints the browser gave (`internal`, `hybrid`, …), handed back in `excludeCredentials`.
    package var transports: [String]
    package var name: String
    package var createdAt: Date
    package var lastUsedAt: Date?
}

/// Which ceremony a challenge was issued for: a challenge finishes only its own.
package enum PasskeyCeremony: String, Sendable, Equatable {
    case registration
    case authentication
}

/// A challenge the server issued with a ceremony's options; kept by the SHA-256 of its `challenge_id`.
package struct PasskeyChallengeRecord: Sendable, Equatable {
    package var idHash: String
    package var ceremony: PasskeyCeremony
    /// The 32 random bytes the authenticator signs over (in `clientDataJSON.challenge`).
    package var challenge: [UInt8]
    /// A registration's: the user and the session that asked for the options.
    package var userID: String?
    package var sessionID: String?
    package var createdAt: Date
    package var expiresAt: Date
}

/// What adding a passkey did.
package enum PasskeyAddition: Sendable, Equatable {
    case added
    /// A passkey with this credential ID exists (this user's or another's); nothing was written.
    case credentialExists
    /// The user is gone; nothing was written.
    case userGone
}

/// An assertion that verified, to be spent with the sign-in it buys.
package struct PasskeyUse: Sendable, Equatable {
    package var passkeyID: String
    /// The counter the assertion was checked against: the compare-and-set expects it still stored.
    package var storedSignCount: UInt32
    package var signCount: UInt32
    package var backedUp: Bool
    package var at: Date
}

/// What a passkey sign-in did.
package enum PasskeySignIn: Sendable, Equatable {
    /// The counter was updated, the device joined (when one was named; `newDevice` when its row was created) and the session
    /// stored, or its second-factor challenge instead.
    case signedIn(SessionStart, newDevice: Bool)
    /// Another sign-in with this passkey moved its counter first; nothing was written.
    case counterChanged
    /// The passkey (or its user) is gone; nothing was written.
    case passkeyGone
    /// The device ID is another user's (a device, or a user registered with `users/register`); nothing was written.
    case deviceClaimed
    /// The device ID was a deleted user's and is retired; nothing was written.
    case deviceIDRetired
}

/// Passkeys and the challenges of their ceremonies.
package protocol PasskeyStore: Sendable {
    func storeChallenge(_ challenge: PasskeyChallengeRecord) async throws
    /// Removes the challenge and returns it, expired or not: each challenge is taken once, and of concurrent takers one gets it.
    func takeChallenge(idHash: String) async throws -> PasskeyChallengeRecord?
    /// The user's passkeys, oldest first.
    func passkeys(ofUser userID: String) async throws -> [PasskeyRecord]
    func passkey(credentialID: [UInt8]) async throws -> PasskeyRecord?
    func addPasskey(_ passkey: PasskeyRecord) async throws -> PasskeyAddition
    /// The renamed passkey; nil when the user has no passkey `id`.
    func renamePasskey(id: String, userID: String, name: String) async throws -> PasskeyRecord?
    /// Whether the user had passkey `id` (now removed).
    func deletePasskey(id: String, userID: String, at time: Date) async throws -> Bool
    /// Spends `use` (its counter, compare-and-set), joins `device` to the passkey's user when given (a new row, or the
    /// user's own device seen again) and stores `session` — or its challenge, for a gated sign-in of a user with a second
    /// factor — in one transaction.
    func signIn(with use: PasskeyUse, session: NewSession, joining device: DeviceRecord?) async throws -> PasskeySignIn
}
