import Foundation
import SQLKit

/// How many rows one pruning pass removed, by table.
package struct PruneCounts: Sendable, Equatable {
    package var rateLimitHits = 0
    package var refreshTokens = 0
    package var sessions = 0
    package var nonces = 0
    package var proofs = 0
    /// Second-factor challenges (`mfa_token`s) past their five minutes.
    package var challenges = 0
    /// Passkey ceremonies' challenges past `passkeys.challenge-lifetime`, never answered.
    package var passkeyChallenges = 0
    package var revocations = 0
    package var sentMails = 0
    package var emailCodes = 0
    /// Unverified addresses registered without a session, their users included.
    package var unverifiedAccounts = 0
    /// The users of those that nothing else hung on.
    package var users = 0
    /// Webhook events (with their deliveries) finished long ago, or that no endpoint took.
    package var webhookEvents = 0

    package var total: Int {
        self.rateLimitHits + self.refreshTokens + self.sessions + self.nonces + self.proofs + self.challenges + self.passkeyChallenges
            + self.revocations + self.sentMails
            + self.emailCodes
            + self.unverifiedAccounts + self.webhookEvents
    }
}

/// What a pruning pass may remove, as of `now`.
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
    /// Webhook events fanned out before this go with their deliveries once none is pending.
    package var webhookEventsBefore: Date
    /// Webhook events fanned out to no endpoint before this go.
    package var unsentWebhookEventsBefore: Date
    /// Each delete goes in transactions of at most this many rows, repeated until one removes fewer: a backlog (after an
    /// upgrade or a long stop) takes several short transactions in one pass instead of one that outlives `database.timeout`.
    package var batchSize: Int

    package init(
        now: Date, hitWindows: [String: TimeInterval] = [:], hitsBefore: Date, spentTokensBefore: Date = .distantPast, sessionsBefore: Date,
        feedBefore: Date, sentMailBefore: Date = .distantPast, unverifiedAccountsBefore: Date = .distantPast,
        webhookEventsBefore: Date = .distantPast, unsentWebhookEventsBefore: Date = .distantPast, batchSize: Int = 20_000
    ) {
        self.webhookEventsBefore = webhookEventsBefore
        self.unsentWebhookEventsBefore = unsentWebhookEventsBefore
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
package protocol PruningStore: Sendable {
    /// Removes what `rules` allow: rate-limit hits past their policy's window, refresh tokens past their expiry or spent
    /// past their grace and lost-answer windows, sessions revoked long ago or left without refresh tokens, spent nonces
    /// and DPoP proofs past their expiry, old revocation-feed entries, old sent mails, expired email codes, and addresses
    /// registered without a session and left unverified (with the users made for them).
    func prune(_ rules: PruneRules) async throws -> PruneCounts
}

extension SQLLatchkeyStore: PruningStore {
    package func prune(_ rules: PruneRules) async throws -> PruneCounts {
        let now = rules.now
        func delete(from table: String, key: [String], emitting event: WebhookEventType? = nil, where condition: SQLQueryString) async throws -> Int {
            try await self.deleteInBatches(from: table, key: key, where: condition, batchSize: rules.batchSize, emitting: event, at: now)
        }
        var counts = PruneCounts()
        // Buckets are `<policy name>:<hashed key>`.
        let pastOwnWindow = rules.hitWindows.sorted { $0.key < $1.key }.map { name, window -> SQLQueryString in
            let prefix = name + ":"
            return "(substr(bucket, 1, \(literal: prefix.unicodeScalars.count)) = \(bind: prefix) AND at <= \(bind: (now - window).stored))"
        }
        counts.rateLimitHits = try await delete(
            from: "rate_limit_hits", key: ["bucket", "at", "id"],
            where: "at < \(bind: rules.hitsBefore.stored)" + pastOwnWindow.map { " OR " + $0 }.joined())
        // Two deletes, so each finds its rows through its own index (expires_at; the spent tokens' used_at).
        counts.refreshTokens = try await delete(
            from: "refresh_tokens", key: ["session_id", "token_hash"], where: "expires_at < \(bind: now.stored)")
        counts.refreshTokens += try await delete(
            from: "refresh_tokens", key: ["session_id", "token_hash"],
            where: """
                used_at < \(bind: rules.spentTokensBefore.stored)
                AND used_at < (SELECT MAX(newer.used_at) FROM refresh_tokens newer WHERE newer.session_id = refresh_tokens.session_id)
                """)
        counts.sessions = try await delete(
            from: "sessions", key: ["id"],
            where: """
                revoked_at < \(bind: rules.sessionsBefore.stored)
                OR NOT EXISTS (SELECT 1 FROM refresh_tokens r WHERE r.session_id = sessions.id)
                """)
        counts.nonces = try await delete(from: "used_nonces", key: ["nonce_hash"], where: "expires_at < \(bind: now.stored)")
        counts.proofs = try await delete(from: "dpop_proofs", key: ["jti_hash"], where: "expires_at < \(bind: now.stored)")
        counts.challenges = try await delete(from: "mfa_challenges", key: ["token_hash"], where: "expires_at < \(bind: now.stored)")
        counts.passkeyChallenges = try await delete(from: "passkey_challenges", key: ["id_hash"], where: "expires_at < \(bind: now.stored)")
        // The newest entry stays: SQLite would otherwise hand out its sequence number again once the table is
        // empty, and running processes, whose cursor is past it, would never read the new entries.
        counts.revocations = try await delete(
            from: "revocations", key: ["seq"],
            where: "created_at < \(bind: rules.feedBefore.stored) AND seq < (SELECT MAX(newest.seq) FROM revocations newest)")
        counts.sentMails = try await delete(from: "outbox", key: ["id"], where: "sent_at < \(bind: rules.sentMailBefore.stored)")
        counts.emailCodes = try await delete(from: "email_codes", key: ["user_id", "purpose"], where: "expires_at < \(bind: now.stored)")
        // Addresses registered without a session (`attached = 0`: the registration made their user), never verified, older
        // than the rule and without a live code (expired ones are gone by now); deleting the user takes its address along.
        let abandoned: SQLQueryString = """
            SELECT a.user_id FROM email_accounts a
            WHERE a.verified_at IS NULL AND a.attached = 0 AND a.created_at < \(bind: rules.unverifiedAccountsBefore.stored)
            """
        // The users go as any deletion does for the app's backend: `user.deleted`, in the transaction that deletes them.
        counts.users = try await delete(
            from: "users", key: ["id"], emitting: .userDeleted,
            where: """
                id IN (\(abandoned))
                AND NOT EXISTS (SELECT 1 FROM email_codes c WHERE c.user_id = users.id)
                AND NOT EXISTS (SELECT 1 FROM devices d WHERE d.user_id = users.id)
                AND NOT EXISTS (SELECT 1 FROM identities i WHERE i.user_id = users.id)
                AND NOT EXISTS (SELECT 1 FROM sessions s WHERE s.user_id = users.id)
                AND NOT EXISTS (SELECT 1 FROM access_codes k WHERE k.user_id = users.id)
                AND NOT EXISTS (SELECT 1 FROM budgets b WHERE b.user_id = users.id)
                AND NOT EXISTS (SELECT 1 FROM usage_records u WHERE u.user_id = users.id)
                AND NOT EXISTS (SELECT 1 FROM passkeys p WHERE p.user_id = users.id)
                """)
        // A user something else hangs on keeps it; only the address that never worked goes.
        let addresses = try await delete(
            from: "email_accounts", key: ["user_id"],
            where: "user_id IN (\(abandoned)) AND NOT EXISTS (SELECT 1 FROM email_codes c WHERE c.user_id = email_accounts.user_id)")
        counts.unverifiedAccounts = counts.users + addresses
        // Deleting an event deletes its deliveries (ON DELETE CASCADE).
        counts.webhookEvents = try await delete(
            from: "webhook_events", key: ["id"],
            where: """
                fanned_out = 1 AND created_at < \(bind: rules.unsentWebhookEventsBefore.stored)
                AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = webhook_events.id)
                """)
        counts.webhookEvents += try await delete(
            from: "webhook_events", key: ["id"],
            where: """
                fanned_out = 1 AND created_at < \(bind: rules.webhookEventsBefore.stored)
                AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = webhook_events.id AND d.status = 'pending')
                """)
        return counts
    }

    /// Deletes every row of `table` that `condition` selects, at most `batchSize` rows per transaction, and goes on while a
    /// transaction removes a full batch: a backlog (after an upgrade or a long stop) takes several short transactions, each
    /// well within `database.timeout`, where one unbounded delete would be cut off and rolled back on every pass.
    ///
    /// `condition` is evaluated over `table` under its own name (so it may name `table.column` in correlated subqueries) and is
    /// checked afresh by each transaction. Rows are picked by `key`, the table's primary key: on SQLite most tables are
    /// `WITHOUT ROWID` (no rowid to pick by), and on PostgreSQL the key's index finds each row.
    ///
    /// With `event`, each deleted row's first key column is the `userID` of an `event` written in the same transaction.
    private func deleteInBatches(
        from table: String, key: [String], where condition: SQLQueryString, batchSize: Int, emitting event: WebhookEventType?, at time: Date
    ) async throws -> Int {
        let limit = max(batchSize, 1)
        let picked: SQLQueryString = key.count == 1 ? "\(ident: key[0])" : "(\(idents: key, joinedBy: ", "))"
        let statement: SQLQueryString = """
            DELETE FROM \(ident: table) WHERE \(picked) IN (
                SELECT \(idents: key, joinedBy: ", ") FROM \(ident: table) WHERE (\(condition)) LIMIT \(literal: limit))
            RETURNING \(ident: key[0]) AS gone
            """
        var removed = 0
        while true {
            let batch = try await self.database.transaction { sql in
                let rows = try await sql.raw(statement).all()
                if let event {
                    for row in rows { try await Self.emit(event, userID: try row.decode(column: "gone", as: String.self), at: time, on: sql) }
                }
                return rows.count
            }
            removed += batch
            guard batch >= limit else { return removed }
            try Task.checkCancellation()
        }
    }
}
