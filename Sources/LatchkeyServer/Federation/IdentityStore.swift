import Foundation
import LatchkeyAPI
import SQLKit

/// An identity at a provider and what we keep about it.
@available(LatchkeyServer 1.0, *)
public struct FederatedIdentity: Sendable, Equatable {
    public var provider: String
    public var subject: String
    public var userID: String
    public var email: String?
    /// Apple: the client ID (bundle ID or Services ID) its refresh token was issued to.
    public var clientID: String?
    /// Apple: its refresh token, sealed with the master key.
    public var sealedRefreshToken: String?
    public var createdAt: Date
}

/// What ``IdentityStore/signIn(_:newUserID:at:)`` did.
@available(LatchkeyServer 1.0, *)
public enum FederatedSignIn: Sendable, Equatable {
    /// The identity was known: its user.
    case existing(userID: String)
    /// A new user was created for the identity.
    case created(userID: String)
}

/// The identities table: provider subjects mapped to our user IDs, and nonces spent.
@available(LatchkeyServer 1.0, *)
public protocol IdentityStore: Sendable {
    func identity(provider: String, subject: String) async throws -> FederatedIdentity?
    /// The user of `identity` — creating a federated user with `newUserID` when the identity is new; atomic,
    /// so two first sign-ins at once make one user.
    func signIn(_ identity: FederatedIdentity, newUserID: String, at time: Date) async throws -> FederatedSignIn
    /// Links `identity` to `identity.userID`. Throws ``StoreError/conflict`` when it belongs to another user
    /// (or the user does not exist); linking it again to its own user only updates its Apple refresh token.
    func link(_ identity: FederatedIdentity) async throws
    /// The user's linked identities, oldest first.
    func identities(ofUser userID: String) async throws -> [IdentityRecord]
    /// Removes the user's identities at `provider`; returns how many.
    func unlink(provider: String, fromUser userID: String) async throws -> Int
    /// The user's identities that hold an Apple refresh token.
    func identitiesWithRefreshTokens(ofUser userID: String) async throws -> [FederatedIdentity]
    /// Records `nonceHash` as spent until `expiresAt`; false when it was spent already. Forgets expired ones.
    func spendNonce(_ nonceHash: String, expiresAt: Date, now: Date) async throws -> Bool
}

@available(LatchkeyServer 1.0, *)
extension SQLLatchkeyStore: IdentityStore {
    public func identity(provider: String, subject: String) async throws -> FederatedIdentity? {
        try await self.database.read { sql in
            try await sql.raw(
                """
                SELECT provider, subject, user_id, email, client_id, sealed_refresh_token, created_at FROM identities
                WHERE provider = \(bind: provider) AND subject = \(bind: subject)
                """
            ).first().map(Self.identity(from:))
        }
    }

    public func signIn(_ identity: FederatedIdentity, newUserID: String, at time: Date) async throws -> FederatedSignIn {
        try await self.database.transaction { sql in
            try await Self.serialize(on: "identity \(identity.provider) \(identity.subject)", sql)
            if let known = try await sql.raw(
                "SELECT user_id FROM identities WHERE provider = \(bind: identity.provider) AND subject = \(bind: identity.subject)"
            ).first() {
                let userID = try known.string("user_id")
                if identity.sealedRefreshToken != nil {
                    try await Self.updateRefreshToken(identity, on: sql)
                }
                return .existing(userID: userID)
            }
            try await sql.raw(
                """
                INSERT INTO users (id, kind, created_at) VALUES (\(bind: newUserID), \(bind: UserKind.federated.rawValue), \(bind: time.stored))
                """
            ).run()
            var created = identity
            created.userID = newUserID
            try await Self.insert(created, on: sql)
            return .created(userID: newUserID)
        }
    }

    public func link(_ identity: FederatedIdentity) async throws {
        try await self.database.transaction { sql in
            try await Self.serialize(on: "identity \(identity.provider) \(identity.subject)", sql)
            if let known = try await sql.raw(
                "SELECT user_id FROM identities WHERE provider = \(bind: identity.provider) AND subject = \(bind: identity.subject)"
            ).first() {
                guard try known.string("user_id") == identity.userID else { throw StoreError.conflict }
                if identity.sealedRefreshToken != nil { try await Self.updateRefreshToken(identity, on: sql) }
                return
            }
            try await Self.insert(identity, on: sql)
        }
    }

    public func unlink(provider: String, fromUser userID: String) async throws -> Int {
        try await self.database.transaction { sql in
            try await sql.raw("DELETE FROM identities WHERE provider = \(bind: provider) AND user_id = \(bind: userID) RETURNING subject").all().count
        }
    }

    public func identitiesWithRefreshTokens(ofUser userID: String) async throws -> [FederatedIdentity] {
        try await self.database.read { sql in
            try await sql.raw(
                """
                SELECT provider, subject, user_id, email, client_id, sealed_refresh_token, created_at FROM identities
                WHERE user_id = \(bind: userID) AND sealed_refresh_token IS NOT NULL
                """
            ).all().map(Self.identity(from:))
        }
    }

    public func spendNonce(_ nonceHash: String, expiresAt: Date, now: Date) async throws -> Bool {
        try await self.database.transaction { sql in
            try await sql.raw("DELETE FROM used_nonces WHERE expires_at < \(bind: now.stored)").run()
            return try await sql.raw(
                """
                INSERT INTO used_nonces (nonce_hash, expires_at) VALUES (\(bind: nonceHash), \(bind: expiresAt.stored))
                ON CONFLICT (nonce_hash) DO NOTHING RETURNING nonce_hash
                """
            ).first() != nil
        }
    }

    static func insert(_ identity: FederatedIdentity, on sql: any SQLDatabase) async throws {
        try await sql.raw(
            """
            INSERT INTO identities (provider, subject, user_id, email, client_id, sealed_refresh_token, created_at)
            VALUES (\(bind: identity.provider), \(bind: identity.subject), \(bind: identity.userID), \(bind: identity.email),
                    \(bind: identity.clientID), \(bind: identity.sealedRefreshToken), \(bind: identity.createdAt.stored))
            """
        ).run()
    }

    static func updateRefreshToken(_ identity: FederatedIdentity, on sql: any SQLDatabase) async throws {
        try await sql.raw(
            """
            UPDATE identities SET client_id = \(bind: identity.clientID), sealed_refresh_token = \(bind: identity.sealedRefreshToken)
            WHERE provider = \(bind: identity.provider) AND subject = \(bind: identity.subject)
            """
        ).run()
    }

    static func identity(from row: any SQLRow) throws -> FederatedIdentity {
        FederatedIdentity(
            provider: try row.string("provider"), subject: try row.string("subject"), userID: try row.string("user_id"),
            email: try row.optionalString("email"), clientID: try row.optionalString("client_id"),
            sealedRefreshToken: try row.optionalString("sealed_refresh_token"), createdAt: try row.date("created_at"))
    }
}
