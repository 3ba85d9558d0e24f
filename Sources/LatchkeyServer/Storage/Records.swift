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
    public var createdAt: Date
    public var revokedAt: Date?
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
}

/// Everything one account deletion removed, so caches can forget it.
@available(LatchkeyServer 1.0, *)
public struct DeletedUser: Sendable, Equatable {
    public var userID: String
    public var sessionIDs: [String]
    public var accessCodeIDs: [String]
}
