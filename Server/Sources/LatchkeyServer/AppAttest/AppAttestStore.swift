import Foundation

/// How a device UUID became attested.
package enum AppAttestMethod: String, Sendable, Equatable {
    /// An App Attest attestation: the key is the Secure Enclave's, certified by Apple.
    case attestation
    /// A debug token (simulators, CI), where `app-attest.allow-debug-tokens` lets them stand in.
    case debugToken = "debug_token"
}

/// A device UUID's attested key: its public key, the counter of its last assertion and Apple's receipt (kept opaque).
package struct AppAttestKeyRecord: Sendable, Equatable {
    package var deviceID: String
    /// The key ID, standard base64 (`debug-token:<device ID>` for a debug token's device).
    package var keyID: String
    /// X9.62 uncompressed P-256 public key; nil for a debug token's device.
    package var publicKey: [UInt8]?
    package var counter: UInt32
    package var receipt: [UInt8]?
    package var appID: String?
    package var method: AppAttestMethod
    package var debugTokenID: String?
    package var attestedAt: Date
    /// The user whose registration (`register-device`) proved the key; nil for a key a guest request stored. Only that
    /// user's sessions on the device are attested: a device UUID is not a secret, so a key stored by a guest request
    /// says nothing about whoever registers that UUID later.
    package var userID: String? = nil
}

/// A debug token as listed: never its secret, which is kept only as SHA-256.
package struct AppAttestDebugTokenRecord: Sendable, Equatable {
    package var id: String
    package var name: String
    package var createdAt: Date
    package var revokedAt: Date?
    package var lastUsedAt: Date?
}

/// A key ID already attested for another device UUID, met while storing: the transaction rolls back.
package struct AppAttestKeyInUse: Error {}

/// App Attest challenges, attested keys and debug tokens.
package protocol AppAttestStore: Sendable {
    func storeChallenge(idHash: String, expiresAt: Date) async throws
    /// Removes the challenge and returns when it expires, expired or not: each is taken once, and of concurrent takers one gets it.
    func takeChallenge(idHash: String) async throws -> Date?
    func attestedKey(deviceID: String) async throws -> AppAttestKeyRecord?
    /// The device UUID key ID `keyID` is attested for, if any.
    func deviceID(attestedWith keyID: String) async throws -> String?
    /// Stores `key` for its device UUID outside a sign-in (a guest), replacing the device's earlier key;
    /// ``AppAttestKeyInUse`` when its key ID is another device's.
    func storeAttestedKey(_ key: AppAttestKeyRecord) async throws
    /// Moves the device's assertion counter to `counter` when it is still below it (compare-and-set); false when another
    /// assertion got there first.
    func advanceCounter(deviceID: String, to counter: UInt32) async throws -> Bool
    /// Which of `deviceIDs` are attested for `userID` (their key proved by that user's registration).
    func attestedDevices(among deviceIDs: [String], userID: String) async throws -> Set<String>
    func createDebugToken(id: String, name: String, tokenHash: String, at time: Date) async throws
    func debugTokens() async throws -> [AppAttestDebugTokenRecord]
    /// The token whose hash is `tokenHash` when it is not revoked, now marked used at `time`.
    func useDebugToken(hash tokenHash: String, at time: Date) async throws -> AppAttestDebugTokenRecord?
    /// Whether token `id` existed unrevoked (now revoked, and the devices it attested no longer attested).
    func revokeDebugToken(id: String, at time: Date) async throws -> Bool
}
