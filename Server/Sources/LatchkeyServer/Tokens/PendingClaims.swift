import Foundation
import LatchkeyAPI
import SQLKit
import Synchronization

/// Who a session token is for, as the claims hook is told and `app_metadata` is carried.
package struct ClaimsSubject: Sendable {
    package var userID: String
    package var kind: UserKind
    package var appMetadata: [String: JSONValue]?
    package var identities: [(provider: String, subject: String)] = []
}

/// The names a token's extra claims can never take: the fixed claims of every Latchkey token (and those RFC 9068 and
/// DPoP reserve), `auth_time`, and `app_metadata` (the backend's, never the hook's).
enum TokenClaims {
    static let reserved: Set<String> = [
        "iss", "sub", "aud", "exp", "nbf", "iat", "jti", "sid", "kind", "did", "att", "aal", "amr", "cnf", "auth_time", "app_metadata",
    ]
}

/// The claims of one session's next access token beyond the fixed ones: the user's `app_metadata` and the claims hook's.
///
/// Filled while the sign-in or refresh is written: the store reads the user in its transaction (a disabled user is
/// refused there, 403 `user_disabled`, so nothing is written), and under `hooks.claims.on-failure` `refuse` calls the
/// hook before the commit, so a failed hook leaves nothing behind. Under `omit` the hook is called after the commit
/// (no transaction waits on it) when the token is signed.
package final class PendingClaims: Sendable {
    let hook: ClaimsHook?
    let store: SQLLatchkeyStore?
    private struct State {
        var subject: ClaimsSubject?
        var hookClaims: [String: JSONValue]?
    }
    private let state = Mutex(State())

    init(hook: ClaimsHook?, store: SQLLatchkeyStore?) {
        self.hook = hook
        self.store = store
    }

    /// Inside the writing transaction: the user as it stands there.
    func read(_ subject: ClaimsSubject) { self.state.withLock { $0.subject = subject } }

    /// Inside the writing transaction, right before the session is stored or its token rotated: under `refuse`, the
    /// hook's answer (a failure throws, rolling the transaction back).
    func callHookBeforeCommit(amr: [AuthenticationMethod], on sql: any SQLDatabase) async throws {
        guard let hook = self.hook, hook.onFailure == .refuse, var subject = self.state.withLock({ $0.subject }) else { return }
        subject.identities = try await SQLLatchkeyStore.identityPairs(ofUser: subject.userID, on: sql)
        let claims = try await hook.claims(for: subject, amr: amr)
        self.state.withLock { $0.hookClaims = claims }
    }

    /// The extra claims of the token of `userID`'s session of `amr`: the hook's (called now when it was not yet), then
    /// `app_metadata` when set.
    func claims(userID: String, amr: [AuthenticationMethod]) async throws -> [String: JSONValue] {
        var (subject, hookClaims) = self.state.withLock { ($0.subject, $0.hookClaims) }
        if subject == nil, let store = self.store {
            subject = try await store.database.read { sql in try await SQLLatchkeyStore.claimsSubject(ofUser: userID, on: sql) }
        }
        if hookClaims == nil, let hook = self.hook, var known = subject {
            if let store = self.store {
                known.identities = try await store.database.read { sql in try await SQLLatchkeyStore.identityPairs(ofUser: userID, on: sql) }
            }
            hookClaims = try await hook.claims(for: known, amr: amr)
        }
        var claims = hookClaims ?? [:]
        if let metadata = subject?.appMetadata { claims["app_metadata"] = .object(metadata) }
        return claims
    }
}

extension SQLLatchkeyStore {
    /// The user's kind and `app_metadata`, inside the caller's transaction (`locking`: a writing one); ``ServiceError/userDisabled`` for a disabled
    /// user, nil for none.
    static func claimsSubject(ofUser userID: String, locking: Bool = false, on sql: any SQLDatabase) async throws -> ClaimsSubject? {
        // `locking` (a sign-in's transaction), on PostgreSQL the row is share-locked: a concurrent disable waits for the
        // sign-in and then ends its session too.
        let lock: SQLQueryString = locking && sql.dialect.name == "postgresql" ? " FOR SHARE" : ""
        guard let row = try await sql.raw("SELECT kind, app_metadata, disabled_at FROM users WHERE id = \(bind: userID)" + lock).first() else {
            return nil
        }
        guard try row.optionalDate("disabled_at") == nil else { throw ServiceError.userDisabled }
        return ClaimsSubject(
            userID: userID, kind: UserKind(rawValue: try row.string("kind")),
            appMetadata: try row.optionalString("app_metadata").flatMap(JSONValue.object(parsing:)))
    }

    /// The user's identities as the claims hook is told them: provider and subject, oldest first.
    static func identityPairs(ofUser userID: String, on sql: any SQLDatabase) async throws -> [(provider: String, subject: String)] {
        try await sql.raw("SELECT provider, subject, created_at FROM identities WHERE user_id = \(bind: userID)").all()
            .map { (provider: try $0.string("provider"), subject: try $0.string("subject"), at: try $0.date("created_at")) }
            .sorted { ($0.at, $0.provider, $0.subject) < ($1.at, $1.provider, $1.subject) }.map { ($0.provider, $0.subject) }
    }
}
