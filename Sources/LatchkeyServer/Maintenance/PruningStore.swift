import Foundation
import SQLKit

/// How many rows one pruning pass removed, by table.
@available(LatchkeyServer 1.0, *)
package struct PruneCounts: Sendable, Equatable {
    package var rateLimitHits = 0
    package var refreshTokens = 0
    package var sessions = 0
    package var nonces = 0
    package var proofs = 0
    package var revocations = 0
    package var sentMails = 0
    package var emailCodes = 0
    /// Unverified addresses registered without a session, their users included.
    package var unverifiedAccounts = 0
    /// The users of those that nothing else hung on.
    package var users = 0

    /// These counts and `other`'s, for passes run one after another.
    package func adding(_ other: PruneCounts) -> PruneCounts {
        var sum = self
        sum.rateLimitHits += other.rateLimitHits
        sum.refreshTokens += other.refreshTokens
        sum.sessions += other.sessions
        sum.nonces += other.nonces
        sum.proofs += other.proofs
        sum.revocations += other.revocations
        sum.sentMails += other.sentMails
        sum.emailCodes += other.emailCodes
        sum.unverifiedAccounts += other.unverifiedAccounts
        sum.users += other.users
        return sum
    }

    package var total: Int {
        self.rateLimitHits + self.refreshTokens + self.sessions + self.nonces + self.proofs + self.revocations + self.sentMails + self.emailCodes
            + self.unverifiedAccounts
    }
}

/// What a pruning pass may remove, as of `now`.
@available(LatchkeyServer 1.0, *)
package struct PruneRules: Sendable {
    package var now: Date
    /// Each rate-limit policy's window, by policy name: a hit older than its own policy's window counts for nothing.
    package var hitWindows: [String: TimeInterval]
    /// Hits of buckets no policy names here (a policy since removed) go after the longest window.
    package var hitsBefore: Date
    /// A spent refresh token used before this (past the grace window) goes once a successor of it was used (its
    /// lost-answer window is over): the session's newest spent token (its successor unused) stays. A chain is linear, so
    /// that is every spent token but the one used last (tokens spent at the same instant all stay).
    package var spentTokensBefore: Date
    /// Sessions revoked before this go.
    package var sessionsBefore: Date
    /// Revocation-feed entries older than this go (the newest always stays).
    package var feedBefore: Date
    /// Mails sent before this go from the outbox.
    package var sentMailBefore: Date
    /// Addresses registered without a session before this and never verified go (none has a live code), and with them
    /// the users registration made for them when nothing else (a device, an identity, a session, an access code, a budget
    /// or usage) hangs on those users.
    package var unverifiedAccountsBefore: Date
    /// At most this many rate-limit hits, and as many spent refresh tokens, go in one pass: a backlog (after an upgrade or a
    /// long stop) then takes several short passes instead of one transaction that outlives `database.timeout`.
    package var batchSize: Int

    package init(
        now: Date, hitWindows: [String: TimeInterval] = [:], hitsBefore: Date, spentTokensBefore: Date = .distantPast, sessionsBefore: Date,
        feedBefore: Date, sentMailBefore: Date = .distantPast, unverifiedAccountsBefore: Date = .distantPast, batchSize: Int = 20_000
    ) {
        self.batchSize = batchSize
        self.sentMailBefore = sentMailBefore
        self.unverifiedAccountsBefore = unverifiedAccountsBefore
        self.now = now
        self.hitWindows = hitWindows
        self.hitsBefore = hitsBefore
        self.spentTokensBefore = spentTokensBefore
        self.sessionsBefore = sessionsBefore
        self.feedBefore = feedBefore
    }
}

/// Rows that no longer decide anything, removed so the database stays bounded.
@available(LatchkeyServer 1.0, *)
package protocol PruningStore: Sendable {
    /// Removes what `rules` allow: rate-limit hits past their policy's window, refresh tokens past their expiry or spent
    /// past their grace and lost-answer windows, sessions revoked long ago or left without refresh tokens, spent nonces
    /// and DPoP proofs past their expiry, old revocation-feed entries, old sent mails, expired email codes, and addresses
    /// registered without a session and left unverified (with the users made for them).
    func prune(_ rules: PruneRules) async throws -> PruneCounts
}

@available(LatchkeyServer 1.0, *)
extension SQLLatchkeyStore: PruningStore {
    package func prune(_ rules: PruneRules) async throws -> PruneCounts {
        let now = rules.now
        return try await self.database.transaction { sql in
            func delete(_ statement: SQLQueryString) async throws -> Int {
                try await sql.raw("\(statement) RETURNING 1 AS gone").all().count
            }
            var counts = PruneCounts()
            // Buckets are `<policy name>:<hashed key>`.
            let pastOwnWindow = rules.hitWindows.sorted { $0.key < $1.key }.map { name, window -> SQLQueryString in
                let prefix = name + ":"
                return "(substr(bucket, 1, \(literal: prefix.unicodeScalars.count)) = \(bind: prefix) AND at <= \(bind: (now - window).stored))"
            }
            let pastWindow: SQLQueryString = "at < \(bind: rules.hitsBefore.stored)" + pastOwnWindow.map { " OR " + $0 }.joined()
            counts.rateLimitHits = try await delete(
                """
                DELETE FROM rate_limit_hits WHERE (bucket, at, id) IN (
                    SELECT bucket, at, id FROM rate_limit_hits WHERE \(pastWindow) LIMIT \(literal: rules.batchSize))
                """)
            // Two statements, so each finds its rows through its own index (expires_at; the spent tokens' used_at).
            counts.refreshTokens = try await delete("DELETE FROM refresh_tokens WHERE expires_at < \(bind: now.stored)")
            counts.refreshTokens += try await delete(
                """
                DELETE FROM refresh_tokens WHERE (session_id, token_hash) IN (
                    SELECT spent.session_id, spent.token_hash FROM refresh_tokens spent WHERE spent.used_at < \(bind: rules.spentTokensBefore.stored)
                    AND spent.used_at < (SELECT MAX(newer.used_at) FROM refresh_tokens newer WHERE newer.session_id = spent.session_id)
                    LIMIT \(literal: rules.batchSize))
                """)
            counts.sessions = try await delete(
                """
                DELETE FROM sessions WHERE revoked_at < \(bind: rules.sessionsBefore.stored)
                OR NOT EXISTS (SELECT 1 FROM refresh_tokens r WHERE r.session_id = sessions.id)
                """)
            counts.nonces = try await delete("DELETE FROM used_nonces WHERE expires_at < \(bind: now.stored)")
            counts.proofs = try await delete("DELETE FROM dpop_proofs WHERE expires_at < \(bind: now.stored)")
            // The newest entry stays: SQLite would otherwise hand out its sequence number again once the table is
            // empty, and running processes, whose cursor is past it, would never read the new entries.
            counts.revocations = try await delete(
                "DELETE FROM revocations WHERE created_at < \(bind: rules.feedBefore.stored) AND seq < (SELECT MAX(seq) FROM revocations)")
            counts.sentMails = try await delete("DELETE FROM outbox WHERE sent_at < \(bind: rules.sentMailBefore.stored)")
            counts.emailCodes = try await delete("DELETE FROM email_codes WHERE expires_at < \(bind: now.stored)")
            (counts.unverifiedAccounts, counts.users) = try await Self.pruneUnverifiedAccounts(before: rules.unverifiedAccountsBefore, on: sql)
            return counts
        }
    }

    /// Addresses registered without a session (`attached = 0`: the registration made their user), never verified, older
    /// than `time` and without a live code (expired ones are gone by now); deleting the user takes its address along.
    private static func pruneUnverifiedAccounts(before time: Date, on sql: any SQLDatabase) async throws -> (accounts: Int, users: Int) {
        let abandoned: SQLQueryString =
            "SELECT a.user_id FROM email_accounts a WHERE a.verified_at IS NULL AND a.attached = 0 AND a.created_at < \(bind: time.stored)"
        let users = try await sql.raw(
            """
            DELETE FROM users WHERE id IN (\(abandoned))
            AND NOT EXISTS (SELECT 1 FROM email_codes c WHERE c.user_id = users.id)
            AND NOT EXISTS (SELECT 1 FROM devices d WHERE d.user_id = users.id)
            AND NOT EXISTS (SELECT 1 FROM identities i WHERE i.user_id = users.id)
            AND NOT EXISTS (SELECT 1 FROM sessions s WHERE s.user_id = users.id)
            AND NOT EXISTS (SELECT 1 FROM access_codes k WHERE k.user_id = users.id)
            AND NOT EXISTS (SELECT 1 FROM budgets b WHERE b.user_id = users.id)
            AND NOT EXISTS (SELECT 1 FROM usage_records u WHERE u.user_id = users.id)
            RETURNING 1 AS gone
            """
        ).all().count
        // A user something else hangs on keeps it; only the address that never worked goes.
        let accounts = try await sql.raw(
            """
            DELETE FROM email_accounts WHERE user_id IN (\(abandoned))
            AND NOT EXISTS (SELECT 1 FROM email_codes c WHERE c.user_id = email_accounts.user_id)
            RETURNING 1 AS gone
            """
        ).all().count
        return (users + accounts, users)
    }
}
