import Foundation
import LatchkeyAPI

/// A user row.
@available(LatchkeyServer 1.0, *)
public struct UserRecord: Sendable, Equatable {
    public var id: String
    public var kind: UserKind
    public var createdAt: Date
}

/// A device row; the secret only as its hash.
@available(LatchkeyServer 1.0, *)
public struct DeviceRecord: Sendable, Equatable {
    public var id: String
    public var userID: String
    public var secretHash: String
    public var createdAt: Date
    public var lastSeenAt: Date?
    /// The RFC 7638 thumbprint of the device's DPoP key, when it registered with one: it then proves itself with
    /// that key, never with a secret.
    public var keyThumbprint: String?
}

/// A linked identity from an identity provider.
@available(LatchkeyServer 1.0, *)
public struct IdentityRecord: Sendable, Equatable {
    public var provider: String
    public var subject: String
    public var userID: String
    public var createdAt: Date
}

/// A session: the family of refresh tokens that one sign-in started.
@available(LatchkeyServer 1.0, *)
public struct SessionRecord: Sendable, Equatable {
    public var id: String
    public var userID: String
    public var deviceID: String?
    /// When the session began: its user authenticated then (`auth_time`); refreshes keep it.
    public var createdAt: Date
    public var revokedAt: Date?
    /// The thumbprint of the key its refreshes must be signed with (DPoP), when it is bound to one.
    public var dpopThumbprint: String?
}

/// An access code's bookkeeping row; the code itself is a JWT whose `jti` is `id`.
@available(LatchkeyServer 1.0, *)
public struct AccessCodeRecord: Sendable, Equatable {
    public var id: String
    public var userID: String
    public var note: String?
    public var createdAt: Date
    public var expiresAt: Date
    public var revokedAt: Date?
}

/// A signing key: the public key in PEM, the private key sealed with the master key.
@available(LatchkeyServer 1.0, *)
public struct SigningKeyRecord: Sendable, Equatable {
    public var kid: String
    public var algorithm: String
    public var publicKeyPEM: String
    public var sealedPrivateKey: String
    public var createdAt: Date
    public var retiredAt: Date?
    /// A revoked key verifies nothing and is not published (an emergency: the key leaked).
    public var revokedAt: Date?
}

/// Everything one account deletion removed, so caches can forget it.
@available(LatchkeyServer 1.0, *)
public struct DeletedUser: Sendable, Equatable {
    public var userID: String
    public var sessionIDs: [String]
    public var accessCodeIDs: [String]
}
