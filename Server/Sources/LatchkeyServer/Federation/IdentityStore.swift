import Foundation
import LatchkeyAPI
import SQLKit

/// An identity at a provider and what we keep about it.
package struct FederatedIdentity: Sendable, Equatable {
    package var provider: String
    package var subject: String
    package var userID: String
    package var email: String?
    /// Apple: the client ID (bundle ID or Services ID) its refresh token was issued to.
    package var clientID: String?
    /// Apple: its refresh token, sealed with the master key.
    package var sealedRefreshToken: String?
    package var createdAt: Date
}

/// What ``IdentityStore/signIn(_:newUserID:at:)`` did.
package enum FederatedSignIn: Sendable, Equatable {
    /// The identity was known: its user.
    case existing(userID: String)
    /// A new user was created for the identity.
    case created(userID: String)

    /// The user signed in.
    package var userID: String {
        switch self {
        case .existing(let userID), .created(let userID): userID
        }
    }
}

/// A nonce an identity token carries, spent with the sign-in it starts.
package struct SpentNonce: Sendable, Equatable {
    let hash: String
    let expiresAt: Date
}

/// The identities table: provider subjects mapped to our user IDs, and nonces spent.
package protocol IdentityStore: Sendable {
    func identity(provider: String, subject: String) async throws -> FederatedIdentity?
    /// The user of `identity` — creating a federated user with `newUserID` when the identity is new; atomic,
    /// so two first sign-ins at once make one user.
    func signIn(_ identity: FederatedIdentity, newUserID: String, at time: Date) async throws -> FederatedSignIn
    /// One sign-in through an identity provider, as one transaction: spends `nonce` (``TokenRejection/nonceReused``
    /// when it was spent), links `identity` to the user `linkingTo` (``ServiceError/identityAlreadyLinked`` when it
    /// belongs to another) or finds its user — creating a federated user `newUserID` for a new identity — keeps its Apple
    /// refresh token, and creates `session` for that user (its `userID` is set here) — or its second-factor challenge instead
    /// (``SessionStart/challenged(_:)``) when the session carries one and the user has a confirmed factor. A failure
    /// anywhere writes nothing.
    func completeSignIn(
        _ identity: FederatedIdentity, linkingTo: String?, newUserID: String, nonce: SpentNonce?, session: NewSession, now: Date
    )
        async throws -> (FederatedSignIn, SessionStart)
    /// The user's linked identities, oldest first.
    func identities(ofUser userID: String) async throws -> [IdentityRecord]
    /// Removes the user's identities at `provider`; returns how many.
    func unlink(provider: String, fromUser userID: String, at time: Date) async throws -> Int
    /// The user's identities that hold an Apple refresh token.
    func identitiesWithRefreshTokens(ofUser userID: String) async throws -> [FederatedIdentity]
}

extension SQLLatchkeyStore: IdentityStore {
    package func identity(provider: String, subject: String) async throws -> FederatedIdentity? {
        try await self.database.read { sql in
            try await sql.raw(
                """
                SELECT provider, subject, user_id, email, client_id, sealed_refresh_token, created_at FROM identities
                WHERE provider = \(bind: provider) AND subject = \(bind: subject)
                """
            ).first().map(Self.identity(from:))
        }
    }

    package func signIn(_ identity: FederatedIdentity, newUserID: String, at time: Date) async throws -> FederatedSignIn {
        try await self.changing { sql, changes in
            let outcome = try await Self.findOrCreateUser(
                of: identity, linkingTo: nil, newUserID: newUserID, at: time, on: sql, noting: changes
            ).outcome
            changes.note(.userChanged(outcome.userID))
            return outcome
        }
    }

    package func completeSignIn(
        _ identity: FederatedIdentity, linkingTo: String?, newUserID: String, nonce: SpentNonce?, session: NewSession, now: Date
    ) async throws -> (FederatedSignIn, SessionStart) {
        try await self.changing { sql, changes in
            if let nonce {
                try await sql.raw("DELETE FROM used_nonces WHERE expires_at < \(bind: now.stored)").run()
                let fresh =
                    try await sql.raw(
                        """
                        INSERT INTO used_nonces (nonce_hash, expires_at) VALUES (\(bind: nonce.hash), \(bind: nonce.expiresAt.stored))
                        ON CONFLICT (nonce_hash) DO NOTHING RETURNING nonce_hash
                        """
                    ).first() != nil
                guard fresh else { throw TokenRejection.nonceReused }
            }
            let outcome = try await Self.findOrCreateUser(
                of: identity, linkingTo: linkingTo, newUserID: newUserID, at: now, on: sql, noting: changes
            ).outcome
            var session = session
            switch outcome {
            case .existing(let userID), .created(let userID): session.userID = userID
            }
            let start = try await Self.insert(session, on: sql)
            changes.note(.userChanged(outcome.userID))
            return (outcome, start)
        }
    }

    /// The user of `identity` inside the caller's transaction: `linkingTo` (linking it when it was not linked yet:
    /// `linked`, noted as ``StoreChange/identityLinked(userID:provider:)``), the user it is linked to, or a new federated
    /// user `newUserID`; its Apple refresh token is kept.
    private static func findOrCreateUser(
        of identity: FederatedIdentity, linkingTo: String?, newUserID: String, at time: Date, on sql: any SQLDatabase,
        noting changes: StoreChanges.Notes
    ) async throws -> (outcome: FederatedSignIn, linked: Bool) {
        try await Self.serialize(on: "identity \(identity.provider) \(identity.subject)", sql)
        if let known = try await sql.raw(
            "SELECT user_id FROM identities WHERE provider = \(bind: identity.provider) AND subject = \(bind: identity.subject)"
        ).first() {
            let userID = try known.string("user_id")
            if let linkingTo, linkingTo != userID { throw ServiceError.identityAlreadyLinked }
            if identity.sealedRefreshToken != nil { try await Self.updateRefreshToken(identity, on: sql) }
            return (.existing(userID: userID), false)
        }
        var created = identity
        if let linkingTo {
            created.userID = linkingTo
            try await Self.insert(created, on: sql)
            changes.note(.identityLinked(userID: linkingTo, provider: identity.provider))
            return (.existing(userID: linkingTo), true)
        }
        try await sql.raw(
            "INSERT INTO users (id, kind, created_at) VALUES (\(bind: newUserID), \(bind: UserKind.federated.rawValue), \(bind: time.stored))"
        ).run()
        try await Self.emit(.userCreated, userID: newUserID, ["kind": UserKind.federated.rawValue], at: time, on: sql)
        created.userID = newUserID
        try await Self.insert(created, on: sql)
        return (.created(userID: newUserID), false)
    }

    package func identities(ofUser userID: String) async throws -> [IdentityRecord] {
        try await self.database.read { sql in try await Self.identities(ofUser: userID, on: sql) }
    }

    package func unlink(provider: String, fromUser userID: String, at time: Date) async throws -> Int {
        defer { self.changes.publish([.userChanged(userID)]) }
        return try await self.database.transaction { sql in
            let count = try await sql.raw(
                "DELETE FROM identities WHERE provider = \(bind: provider) AND user_id = \(bind: userID) RETURNING subject"
            ).all().count
            if count > 0 { try await Self.emit(.identityUnlinked, userID: userID, ["provider": provider], at: time, on: sql) }
            return count
        }
    }

    package func identitiesWithRefreshTokens(ofUser userID: String) async throws -> [FederatedIdentity] {
        try await self.database.read { sql in
            try await sql.raw(
                """
                SELECT provider, subject, user_id, email, client_id, sealed_refresh_token, created_at FROM identities
                WHERE user_id = \(bind: userID) AND sealed_refresh_token IS NOT NULL
                """
            ).all().map(Self.identity(from:))
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
        try await Self.emit(.identityLinked, userID: identity.userID, ["provider": identity.provider], at: identity.createdAt, on: sql)
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
