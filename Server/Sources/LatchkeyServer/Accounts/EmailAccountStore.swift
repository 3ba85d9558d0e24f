import Foundation
import LatchkeyAPI
import SQLKit

/// An email and password account as stored.
package struct EmailAccountRecord: Sendable, Equatable {
    package let userID: String
    package let email: String
    package let emailKey: String
    let passwordHash: String
    package let verifiedAt: Date?
    package let createdAt: Date
    /// Whether the address was attached to a user that existed before (with a session's Bearer), rather than created
    /// with it: until verified, such an address belongs to nobody, so it is never reset.
    package var attached = false
}

/// What a code is for.
enum EmailCodePurpose: String, Sendable {
    case verify
    case reset
}

/// A code about to be stored: the HMAC of its 6 digits, the hash of its link token, and when it expires.
struct NewEmailCode: Sendable {
    let purpose: EmailCodePurpose
    let codeHash: String
    let linkHash: String
    let expiresAt: Date
}

/// How a code is presented: the link's token (its hash), or the account's address key and the code (its HMAC, which
/// depends on the user, so it is computed by `codeHash` once the account is found).
enum EmailCodeLookup: Sendable {
    case link(hash: String)
    case code(emailKey: String, codeHash: @Sendable (_ userID: String) -> String)
}

extension EmailCodePurpose {
    var mail: MailPurpose { self == .verify ? .verify : .reset }
}

/// A mail about to be queued in the outbox.
struct NewOutboxMail: Sendable {
    let recipient: String
    let purpose: MailPurpose
    let messageID: String
    let sealedMessage: String
}

/// What registering an address found.
enum EmailRegistration: Sendable, Equatable {
    case created
    /// Another user has verified this address: the registration was stored unverified (it can never be verified, and
    /// signs nobody in) and the owner's notice queued instead of a code, so the answer is the same as for a new address.
    case taken
    /// Another user has verified this address, and the server reveals it (`email.reveal-existing`): nothing was written.
    case emailTaken
    /// This user already has an address.
    case alreadySet
    /// The user to attach to no longer exists (deleted meanwhile).
    case userGone
}

/// What removing a user's address did.
enum EmailRemoval: Sendable {
    case removed(EmailAccountRecord, revokedSessions: [String])
    /// The user has no address.
    case none
    /// The address is the user's only way to sign in (no device, no identity): nothing changed.
    case onlyWayIn
}

/// What a password reset or change revoked: sessions (their IDs) and device credentials (how many devices).
struct PasswordRevocation: Sendable {
    let userID: String
    let sessions: [String]
    let devices: Int
}

/// Email and password accounts, their codes and the outbox.
///
/// An address is unique among verified accounts only: an unverified one belongs to nobody yet, so it blocks no other
/// registration, and whoever verifies the address first removes the other unverified registrations of it.
protocol EmailAccountStore: Sendable {
    /// The verified account of the address, else its newest unverified registration, one that created its user first (an
    /// address attached to an existing user is the one a pre-hijacker makes, so a resent code never prefers it).
    func emailAccount(key: String) async throws -> EmailAccountRecord?
    /// The address's newest unverified registration (one that created its user first), if any.
    func pendingRegistration(key: String) async throws -> EmailAccountRecord?
    /// The account a reset of the address is for: the verified one, else the newest unverified one created with its user
    /// (never an unverified address attached to an existing user).
    func resettableAccount(key: String) async throws -> EmailAccountRecord?
    func emailAccount(userID: String) async throws -> EmailAccountRecord?
    /// The account whose pending code of `purpose` has the link token of this hash, if any (spends nothing).
    func emailAccount(linkHash: String, purpose: EmailCodePurpose) async throws -> EmailAccountRecord?
    /// Attaches the address to `userID` (creating that user first when `newUser`), stores the verification code and
    /// queues its mail, all in one transaction. When another user has verified the address: with `revealExisting`
    /// nothing is written (``EmailRegistration/emailTaken``); otherwise the address is stored unverified without a code
    /// and `takenMail` (the owner's notice) is queued instead of `mail` (``EmailRegistration/taken``).
    func registerEmail(
        userID: String, newUser: Bool, email: String, key: String, passwordHash: String, code: NewEmailCode, mail: NewOutboxMail,
        takenMail: NewOutboxMail?, revealExisting: Bool, at time: Date
    ) async throws -> EmailRegistration
    /// Removes the user's address (and its codes) and revokes the user's sessions except `keeping`; queues `notice` when
    /// the address was verified. Unless `allowingOnlyWayIn`, changes nothing when the user has no device or identity.
    func removeEmail(
        userID: String, keepingSession keeping: String?, allowingOnlyWayIn: Bool, notice: NewOutboxMail?, at time: Date
    )
        async throws -> EmailRemoval
    /// Queues `mail` on its own (a notice of something another store committed).
    func queueMail(_ mail: NewOutboxMail, at time: Date) async throws
    /// Replaces the user's code of `code.purpose` and queues its mail, in one transaction.
    func issueCode(userID: String, code: NewEmailCode, mail: NewOutboxMail, at time: Date) async throws
    /// Spends a verification code and marks the address verified; nil when the code is wrong (a try is counted: the
    /// 5th wrong one deletes the code), expired or unknown.
    func verifyEmail(_ lookup: EmailCodeLookup, maxAttempts: Int, at time: Date) async throws -> EmailAccountRecord?
    /// Spends a reset code, sets the new password hash (which also verifies the address: the mail arrived), revokes
    /// every session of the user and the credentials of every device but the one bound to `keepingDeviceKey`; nil as for
    /// ``verifyEmail(_:maxAttempts:at:)``.
    func resetPassword(
        _ lookup: EmailCodeLookup, newHash: String, maxAttempts: Int, keepingDeviceKey: String?, at time: Date
    ) async throws -> PasswordRevocation?
    /// Sets the password hash and, unless `reason` is empty, revokes the user's sessions except `keeping` and the
    /// credentials of every device but the one bound to `keepingDeviceKey`, and queues `notice`. With `expectedHash`,
    /// changes nothing (and returns nil) unless the stored hash is still that one.
    func setPasswordHash(
        userID: String, hash: String, expectedHash: String?, revokingSessionsExcept keeping: String?, keepingDeviceKey: String?,
        notice: NewOutboxMail?, reason: String, at time: Date
    ) async throws -> PasswordRevocation?
    /// Support: marks the address verified; false when the user has no email account, or another user verified it.
    func markEmailVerified(userID: String, at time: Date) async throws -> Bool
}

extension EmailAccountStore {
    /// ``setPasswordHash(userID:hash:expectedHash:revokingSessionsExcept:keepingDeviceKey:notice:reason:at:)`` as a rehash
    /// after a sign-in uses it (with an empty `reason`: nothing revoked); returns the revoked sessions.
    func setPasswordHash(
        userID: String, hash: String, expectedHash: String?, revokingSessionsExcept keeping: String?, reason: String, at time: Date
    ) async throws -> [String]? {
        try await self.setPasswordHash(
            userID: userID, hash: hash, expectedHash: expectedHash, revokingSessionsExcept: keeping, keepingDeviceKey: nil, notice: nil,
            reason: reason, at: time)?.sessions
    }
}

extension SQLLatchkeyStore: EmailAccountStore {
    package func emailAccount(key: String) async throws -> EmailAccountRecord? {
        try await self.database.read { sql in
            try await sql.raw(
                "SELECT * FROM email_accounts WHERE email_key = \(bind: key) ORDER BY (verified_at IS NULL), attached, created_at DESC LIMIT 1"
            ).first().map(Self.emailAccount(from:))
        }
    }

    func pendingRegistration(key: String) async throws -> EmailAccountRecord? {
        try await self.database.read { sql in
            try await sql.raw(
                "SELECT * FROM email_accounts WHERE email_key = \(bind: key) AND verified_at IS NULL ORDER BY attached, created_at DESC LIMIT 1"
            ).first().map(Self.emailAccount(from:))
        }
    }

    func resettableAccount(key: String) async throws -> EmailAccountRecord? {
        try await self.database.read { sql in
            try await sql.raw(
                """
                SELECT * FROM email_accounts WHERE email_key = \(bind: key) AND (verified_at IS NOT NULL OR attached = 0)
                ORDER BY (verified_at IS NULL), created_at DESC LIMIT 1
                """
            ).first().map(Self.emailAccount(from:))
        }
    }

    package func emailAccount(userID: String) async throws -> EmailAccountRecord? {
        try await self.database.read { sql in
            try await sql.raw("SELECT * FROM email_accounts WHERE user_id = \(bind: userID)").first().map(Self.emailAccount(from:))
        }
    }

    func emailAccount(linkHash: String, purpose: EmailCodePurpose) async throws -> EmailAccountRecord? {
        try await self.database.read { sql in
            try await sql.raw(
                """
                SELECT a.* FROM email_accounts a JOIN email_codes c ON c.user_id = a.user_id
                WHERE c.link_hash = \(bind: linkHash) AND c.purpose = \(bind: purpose.rawValue)
                """
            ).first().map(Self.emailAccount(from:))
        }
    }

    func registerEmail(
        userID: String, newUser: Bool, email: String, key: String, passwordHash: String, code: NewEmailCode, mail: NewOutboxMail,
        takenMail: NewOutboxMail?, revealExisting: Bool, at time: Date
    ) async throws -> EmailRegistration {
        let result: EmailRegistration = try await self.database.transaction { sql in
            try await Self.serialize(on: "email:" + key, sql)
            // Only a verified holder owns the address; unverified registrations of it (another user's) block nothing.
            let taken =
                try await sql.raw("SELECT user_id FROM email_accounts WHERE email_key = \(bind: key) AND verified_at IS NOT NULL").first() != nil
            if taken && revealExisting { return .emailTaken }
            if newUser {
                try await sql.raw(
                    "INSERT INTO users (id, kind, created_at) VALUES (\(bind: userID), \(bind: UserKind.device.rawValue), \(bind: time.stored))"
                ).run()
                try await Self.emit(.userCreated, userID: userID, ["kind": UserKind.device.rawValue], at: time, on: sql)
            } else {
                guard try await sql.raw("SELECT id FROM users WHERE id = \(bind: userID)").first() != nil else { return .userGone }
                if try await sql.raw("SELECT user_id FROM email_accounts WHERE user_id = \(bind: userID)").first() != nil { return .alreadySet }
            }
            let inserted = try await sql.raw(
                """
                INSERT INTO email_accounts (user_id, email, email_key, password_hash, created_at, password_changed_at, attached)
                VALUES (\(bind: userID), \(bind: email), \(bind: key), \(bind: passwordHash), \(bind: time.stored), \(bind: time.stored),
                        \(bind: newUser ? 0 : 1))
                ON CONFLICT DO NOTHING RETURNING user_id
                """
            ).first()
            guard inserted != nil else { return .alreadySet }
            if !newUser { try await Self.emit(.userUpdated, userID: userID, ["change": "email_set"], at: time, on: sql) }
            guard !taken else {
                // Stored like any registration (so nothing tells the two apart), but with no code: it can never be verified.
                if let takenMail { try await Self.enqueue(takenMail, at: time, on: sql) }
                return .taken
            }
            try await Self.storeCode(userID: userID, code, mail: mail, at: time, on: sql)
            return .created
        }
        if result == .created || result == .taken { self.changes.publish([.userChanged(userID)]) }
        return result
    }

    func removeEmail(
        userID: String, keepingSession keeping: String?, allowingOnlyWayIn: Bool, notice: NewOutboxMail?, at time: Date
    )
        async throws -> EmailRemoval
    {
        try await self.changing { sql, changes -> EmailRemoval in
            if !allowingOnlyWayIn {
                let otherWayIn = try await sql.raw(
                    """
                    SELECT 1 AS found WHERE EXISTS (SELECT 1 FROM devices WHERE user_id = \(bind: userID))
                    OR EXISTS (SELECT 1 FROM identities WHERE user_id = \(bind: userID))
                    """
                ).first()
                guard otherWayIn != nil else {
                    let exists = try await sql.raw("SELECT user_id FROM email_accounts WHERE user_id = \(bind: userID)").first() != nil
                    return exists ? .onlyWayIn : EmailRemoval.none
                }
            }
            guard
                let account = try await sql.raw("DELETE FROM email_accounts WHERE user_id = \(bind: userID) RETURNING *").first()
                    .map(Self.emailAccount(from:))
            else { return EmailRemoval.none }
            try await sql.raw("DELETE FROM email_codes WHERE user_id = \(bind: userID)").run()
            if account.verifiedAt != nil, let notice { try await Self.enqueue(notice, at: time, on: sql) }
            let revoked = try await Self.revokeSessions(
                where: "user_id = \(bind: userID) AND id <> \(bind: keeping ?? "")", reason: "email_removed", at: time, on: sql, noting: changes)
            changes.note(.userChanged(userID))
            return .removed(account, revokedSessions: revoked)
        }
    }

    /// Makes the user's address theirs, inside the caller's transaction: marks it verified and removes the other
    /// (unverified) registrations of it. False, removing this registration instead, when another user verified it first.
    private static func claimAddress(
        ofUser userID: String, at time: Date, on sql: any SQLDatabase, noting changes: StoreChanges.Notes
    ) async throws -> Bool {
        guard let row = try await sql.raw("SELECT email_key, verified_at FROM email_accounts WHERE user_id = \(bind: userID)").first() else {
            return false
        }
        if try row.optionalDate("verified_at") != nil { return true }
        let key = try row.string("email_key")
        try await Self.serialize(on: "email:" + key, sql)
        let others = try await sql.raw(
            "SELECT user_id, verified_at FROM email_accounts WHERE email_key = \(bind: key) AND user_id <> \(bind: userID)"
        ).all()
        let losers: [String]
        if try others.contains(where: { try $0.optionalDate("verified_at") != nil }) {
            losers = [userID]
        } else {
            losers = try others.map { try $0.string("user_id") }
            try await sql.raw("UPDATE email_accounts SET verified_at = \(bind: time.stored) WHERE user_id = \(bind: userID)").run()
            try await Self.emit(.userUpdated, userID: userID, ["change": "email_verified"], at: time, on: sql)
        }
        for loser in losers {
            try await sql.raw("DELETE FROM email_codes WHERE user_id = \(bind: loser)").run()
            try await sql.raw("DELETE FROM email_accounts WHERE user_id = \(bind: loser)").run()
            changes.note(.userChanged(loser))
        }
        return losers != [userID]
    }

    /// Makes every device credential of the user but the one bound to `keepingKey` useless (a secret nobody knows, no
    /// key), inside the caller's transaction; returns how many devices lost theirs.
    private static func revokeDevices(ofUser userID: String, keepingKey: String?, on sql: any SQLDatabase) async throws -> Int {
        try await sql.raw(
            """
            UPDATE devices SET secret_hash = \(bind: Secret.hash(Secret.generate())), key_thumbprint = NULL
            WHERE user_id = \(bind: userID) AND (key_thumbprint IS NULL OR key_thumbprint <> \(bind: keepingKey ?? ""))
            RETURNING id
            """
        ).all().count
    }

    func queueMail(_ mail: NewOutboxMail, at time: Date) async throws {
        try await self.database.transaction { sql in try await Self.enqueue(mail, at: time, on: sql) }
    }

    func issueCode(userID: String, code: NewEmailCode, mail: NewOutboxMail, at time: Date) async throws {
        try await self.database.transaction { sql in try await Self.storeCode(userID: userID, code, mail: mail, at: time, on: sql) }
    }

    private static func storeCode(userID: String, _ code: NewEmailCode, mail: NewOutboxMail, at time: Date, on sql: any SQLDatabase) async throws {
        try await sql.raw("DELETE FROM email_codes WHERE user_id = \(bind: userID) AND purpose = \(bind: code.purpose.rawValue)").run()
        try await sql.raw(
            """
            INSERT INTO email_codes (user_id, purpose, code_hash, link_hash, attempts, created_at, expires_at)
            VALUES (\(bind: userID), \(bind: code.purpose.rawValue), \(bind: code.codeHash), \(bind: code.linkHash), 0,
                    \(bind: time.stored), \(bind: code.expiresAt.stored))
            """
        ).run()
        try await Self.enqueue(mail, at: time, on: sql)
    }

    func verifyEmail(_ lookup: EmailCodeLookup, maxAttempts: Int, at time: Date) async throws -> EmailAccountRecord? {
        try await self.changing { sql, changes -> EmailAccountRecord? in
            guard let userID = try await Self.spendCode(.verify, lookup, maxAttempts: maxAttempts, at: time, on: sql),
                try await Self.claimAddress(ofUser: userID, at: time, on: sql, noting: changes)
            else { return nil }
            changes.note(.userChanged(userID))
            return try await sql.raw("SELECT * FROM email_accounts WHERE user_id = \(bind: userID)").first().map(Self.emailAccount(from:))
        }
    }

    func resetPassword(
        _ lookup: EmailCodeLookup, newHash: String, maxAttempts: Int, keepingDeviceKey: String?, at time: Date
    ) async throws -> PasswordRevocation? {
        try await self.changing { sql, changes -> PasswordRevocation? in
            // The mail arrived, so the address is verified: unless another user verified it first.
            guard let userID = try await Self.spendCode(.reset, lookup, maxAttempts: maxAttempts, at: time, on: sql),
                try await Self.claimAddress(ofUser: userID, at: time, on: sql, noting: changes)
            else { return nil }
            try await sql.raw(
                """
                UPDATE email_accounts SET password_hash = \(bind: newHash), password_changed_at = \(bind: time.stored)
                WHERE user_id = \(bind: userID)
                """
            ).run()
            try await Self.emit(.userUpdated, userID: userID, ["change": "password_set"], at: time, on: sql)
            // A reset gives the account back whole: every session ends and every device credential but the requesting
            // device's (which proved its key) stops working, so whoever held the account before is out.
            try await sql.raw("DELETE FROM email_codes WHERE user_id = \(bind: userID)").run()
            changes.note(.userSignedOut(userID))  // also drops the cached profile
            let sessions = try await Self.revokeSessions(
                where: "user_id = \(bind: userID)", reason: "password_reset", at: time, on: sql, noting: changes)
            let devices = try await Self.revokeDevices(ofUser: userID, keepingKey: keepingDeviceKey, on: sql)
            return PasswordRevocation(userID: userID, sessions: sessions, devices: devices)
        }
    }

    /// Checks the presented code inside the caller's transaction: the user ID when it matches (the code is then
    /// deleted), nil otherwise (a wrong code for a known account counts a try; the last allowed try deletes it).
    private static func spendCode(
        _ purpose: EmailCodePurpose, _ lookup: EmailCodeLookup, maxAttempts: Int, at time: Date, on sql: any SQLDatabase
    ) async throws -> String? {
        switch lookup {
        case .link(let hash):
            guard
                let row = try await sql.raw(
                    """
                    DELETE FROM email_codes WHERE link_hash = \(bind: hash) AND purpose = \(bind: purpose.rawValue)
                    RETURNING user_id, expires_at
                    """
                ).first()
            else { return nil }
            return try row.date("expires_at") > time ? try row.string("user_id") : nil
        case .code(let key, let codeHash):
            // Several users may hold the address unverified (each with its own code): the code is checked against each.
            let holders = try await sql.raw(
                """
                SELECT a.user_id FROM email_accounts a JOIN email_codes c ON c.user_id = a.user_id
                WHERE a.email_key = \(bind: key) AND c.purpose = \(bind: purpose.rawValue)
                """
            ).all().map { try $0.string("user_id") }.sorted()
            var live: [(userID: String, attempts: Int)] = []
            for userID in holders {
                try await Self.serialize(on: "email-code:" + userID, sql)
                let condition: SQLQueryString = "user_id = \(bind: userID) AND purpose = \(bind: purpose.rawValue)"
                guard let row = try await sql.raw("SELECT code_hash, attempts, expires_at FROM email_codes WHERE \(condition)").first() else {
                    continue
                }
                if try row.date("expires_at") <= time {
                    try await sql.raw("DELETE FROM email_codes WHERE \(condition)").run()
                } else if Secret.constantTimeEquals(try row.string("code_hash"), codeHash(userID)) {
                    try await sql.raw("DELETE FROM email_codes WHERE \(condition)").run()
                    return userID
                } else {
                    live.append((userID, try row.decode(column: "attempts", as: Int.self) + 1))
                }
            }
            // A wrong code counts a try against every code it was checked against; the last allowed try deletes it.
            for (userID, attempts) in live {
                let condition: SQLQueryString = "user_id = \(bind: userID) AND purpose = \(bind: purpose.rawValue)"
                if attempts >= maxAttempts {
                    try await sql.raw("DELETE FROM email_codes WHERE \(condition)").run()
                } else {
                    try await sql.raw("UPDATE email_codes SET attempts = \(bind: attempts) WHERE \(condition)").run()
                }
            }
            return nil
        }
    }

    func setPasswordHash(
        userID: String, hash: String, expectedHash: String?, revokingSessionsExcept keeping: String?, keepingDeviceKey: String?,
        notice: NewOutboxMail?, reason: String, at time: Date
    ) async throws -> PasswordRevocation? {
        try await self.changing { sql, changes -> PasswordRevocation? in
            let updated =
                if let expectedHash {
                    try await sql.raw(
                        """
                        UPDATE email_accounts SET password_hash = \(bind: hash), password_changed_at = \(bind: time.stored)
                        WHERE user_id = \(bind: userID) AND password_hash = \(bind: expectedHash) RETURNING user_id
                        """
                    ).first()
                } else {
                    try await sql.raw(
                        """
                        UPDATE email_accounts SET password_hash = \(bind: hash), password_changed_at = \(bind: time.stored)
                        WHERE user_id = \(bind: userID) RETURNING user_id
                        """
                    ).first()
                }
            guard updated != nil else { return nil }
            // No reason: the same password rehashed at new parameters, which changes nothing of the user.
            guard !reason.isEmpty else { return PasswordRevocation(userID: userID, sessions: [], devices: 0) }
            try await Self.emit(.userUpdated, userID: userID, ["change": "password_set"], at: time, on: sql)
            try await sql.raw("DELETE FROM email_codes WHERE user_id = \(bind: userID) AND purpose = \(bind: EmailCodePurpose.reset.rawValue)").run()
            if let notice { try await Self.enqueue(notice, at: time, on: sql) }
            let sessions = try await Self.revokeSessions(
                where: "user_id = \(bind: userID) AND id <> \(bind: keeping ?? "")", reason: reason, at: time, on: sql, noting: changes)
            let devices = try await Self.revokeDevices(ofUser: userID, keepingKey: keepingDeviceKey, on: sql)
            if devices > 0 { changes.note(.userChanged(userID)) }
            return PasswordRevocation(userID: userID, sessions: sessions, devices: devices)
        }
    }

    package func markEmailVerified(userID: String, at time: Date) async throws -> Bool {
        try await self.changing { sql, changes in
            let done = try await Self.claimAddress(ofUser: userID, at: time, on: sql, noting: changes)
            if done { changes.note(.userChanged(userID)) }
            return done
        }
    }

    static func emailAccount(from row: any SQLRow) throws -> EmailAccountRecord {
        EmailAccountRecord(
            userID: try row.string("user_id"), email: try row.string("email"), emailKey: try row.string("email_key"),
            passwordHash: try row.string("password_hash"), verifiedAt: try row.optionalDate("verified_at"), createdAt: try row.date("created_at"),
            attached: try row.decode(column: "attached", as: Int.self) != 0)
    }
}
