import Foundation
import LatchkeyAPI

/// A user row.
public struct UserRecord: Sendable, Equatable {
    public var id: String
    public var kind: UserKind
    public var createdAt: Date
}

/// A device row; the secret only as its hash.
public struct DeviceRecord: Sendable, Equatable {
    public var id: String
    public var userID: String
    public var secretHash: String
    public var createdAt: Date
    public var lastSeenAt: Date?
}

/// A linked identity from an identity provider.
public struct IdentityRecord: Sendable, Equatable {
    public var provider: String
    public var subject: String
    public var userID: String
    public var createdAt: Date
}

/// A session: the family of refresh tokens that one sign-in started.
public struct SessionRecord: Sendable, Equatable {
    public var id: String
    public var userID: String
    public var deviceID: String?
    public var createdAt: Date
    public var revokedAt: Date?
}

/// An access code's bookkeeping row; the code itself is a JWT whose `jti` is `id`.
public struct AccessCodeRecord: Sendable, Equatable {
    public var id: String
    public var userID: String
    public var note: String?
    public var createdAt: Date
    public var expiresAt: Date
    public var revokedAt: Date?
}

/// A signing key: the public key in PEM, the private key sealed with the master key.
public struct SigningKeyRecord: Sendable, Equatable {
    public var kid: String
    public var algorithm: String
    public var publicKeyPEM: String
    public var sealedPrivateKey: String
    public var createdAt: Date
    public var retiredAt: Date?
}

/// Everything one account deletion removed, so caches can forget it.
public struct DeletedUser: Sendable, Equatable {
    public var userID: String
    public var sessionIDs: [String]
    public var accessCodeIDs: [String]
}
