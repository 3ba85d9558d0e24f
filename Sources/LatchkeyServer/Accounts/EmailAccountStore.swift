import Foundation
import LatchkeyAPI
import SQLKit

/// An email and password account as stored.
@available(LatchkeyServer 1.0, *)
package struct EmailAccountRecord: Sendable, Equatable {
    package let userID: String
    package let email: String
    package let emailKey: String
    let passwordHash: String
    package let verifiedAt: Date?
    package let createdAt: Date
}

/// What a code is for.
@available(LatchkeyServer 1.0, *)
enum EmailCodePurpose: String, Sendable {
    case verify
    case reset
}

/// A code about to be stored: the HMAC of its 6 digits, the hash of its link token, and when it expires.
@available(LatchkeyServer 1.0, *)
struct NewEmailCode: Sendable {
    let purpose: EmailCodePurpose
    let codeHash: String
    let linkHash: String
    let expiresAt: Date
}

/// How a code is presented: the link's token (its hash), or the account's address key and the code (its HMAC, which
/// depends on the user, so it is computed by `codeHash` once the account is found).
@available(LatchkeyServer 1.0, *)
enum EmailCodeLookup: Sendable {
    case link(hash: String)
    case code(emailKey: String, codeHash: @Sendable (_ userID: String) -> String)
}

/// A mail about to be queued in the outbox.
@available(LatchkeyServer 1.0, *)
struct NewOutboxMail: Sendable {
    let recipient: String
    let purpose: EmailCodePurpose
    let messageID: String
    let sealedMessage: String
}

/// What registering an address found.
@available(LatchkeyServer 1.0, *)
enum EmailRegistration: Sendable, Equatable {
    case created
    /// Another user has this address.
    case emailTaken
    /// This user already has an address.
    case alreadySet
    /// The user to attach to no longer exists (deleted meanwhile).
    case userGone
}

/// Email and password accounts, their codes and the outbox.
@available(LatchkeyServer 1.0, *)
protocol EmailAccountStore: Sendable {
    func emailAccount(key: String) async throws -> EmailAccountRecord?
    func emailAccount(userID: String) async throws -> EmailAccountRecord?
    /// The account whose pending code of `purpose` has the link token of this hash, if any (spends nothing).
    func emailAccount(linkHash: String, purpose: EmailCodePurpose) async throws -> EmailAccountRecord?
    /// Attaches the address to `userID` (creating that user first when `newUser`), stores the verification code and
    /// queues its mail, all in one transaction.
    func registerEmail(
        userID: String, newUser: Bool, email: String, key: String, passwordHash: String, code: NewEmailCode, mail: NewOutboxMail,
        at time: Date
    ) async throws -> EmailRegistration
    /// Replaces the user's code of `code.purpose` and queues its mail, in one transaction.
    func issueCode(userID: String, code: NewEmailCode, mail: NewOutboxMail, at time: Date) async throws
    /// Spends a verification code and marks the address verified; nil when the code is wrong (a try is counted: the
    /// 5th wrong one deletes the code), expired or unknown.
    func verifyEmail(_ lookup: EmailCodeLookup, maxAttempts: Int, at time: Date) async throws -> EmailAccountRecord?
    /// Spends a reset code, sets the new password hash (which also verifies the address: the mail arrived) and revokes
    /// every session of the user; nil as for ``verifyEmail(_:maxAttempts:at:)``.
    func resetPassword(
        _ lookup: EmailCodeLookup, newHash: String, maxAttempts: Int, at time: Date
    ) async throws
        -> (userID: String, revokedSessions: [String])?
    /// Sets the password hash and revokes the user's sessions except `keeping` (none when nil); returns those revoked.
    /// With `expectedHash`, changes nothing (and returns nil) unless the stored hash is still that one.
    func setPasswordHash(
        userID: String, hash: String, expectedHash: String?, revokingSessionsExcept keeping: String?, reason: String, at time: Date
    )
        async throws -> [String]?
    /// Support: marks the address verified; false when the user has no email account.
    func markEmailVerified(userID: String, at time: Date) async throws -> Bool
}

@available(LatchkeyServer 1.0, *)
extension SQLLatchkeyStore: EmailAccountStore {
    package func emailAccount(key: String) async throws -> EmailAccountRecord? {
        try await self.database.read { sql in
            try await sql.raw("SELECT * FROM email_accounts WHERE email_key = \(bind: key)").first().map(Self.emailAccount(from:))
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
        at time: Date
    ) async throws -> EmailRegistration {
        let result: EmailRegistration = try await self.database.transaction { sql in
            try await Self.serialize(on: "email:" + key, sql)
            if try await sql.raw("SELECT user_id FROM email_accounts WHERE email_key = \(bind: key)").first() != nil { return .emailTaken }
            if newUser {
                try await sql.raw(
                    "INSERT INTO users (id, kind, created_at) VALUES (\(bind: userID), \(bind: UserKind.device.rawValue), \(bind: time.stored))"
                ).run()
            } else {
                guard try await sql.raw("SELECT id FROM users WHERE id = \(bind: userID)").first() != nil else { return .userGone }
                if try await sql.raw("SELECT user_id FROM email_accounts WHERE user_id = \(bind: userID)").first() != nil { return .alreadySet }
            }
            let inserted = try await sql.raw(
                """
                INSERT INTO email_accounts (user_id, email, email_key, password_hash, created_at, password_changed_at)
                VALUES (\(bind: userID), \(bind: email), \(bind: key), \(bind: passwordHash), \(bind: time.stored), \(bind: time.stored))
                ON CONFLICT DO NOTHING RETURNING user_id
                """
            ).first()
            guard inserted != nil else { return .emailTaken }
            try await Self.storeCode(userID: userID, code, mail: mail, at: time, on: sql)
            return .created
        }
        if result == .created { self.profiles.invalidate(userID: userID) }
        return result
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
        let account: EmailAccountRecord? = try await self.database.transaction { sql in
            guard let userID = try await Self.spendCode(.verify, lookup, maxAttempts: maxAttempts, at: time, on: sql) else { return nil }
            return try await sql.raw(
                """
                UPDATE email_accounts SET verified_at = COALESCE(verified_at, \(bind: time.stored)) WHERE user_id = \(bind: userID)
                RETURNING *
                """
            ).first().map(Self.emailAccount(from:))
        }
        if let account { self.profiles.invalidate(userID: account.userID) }
        return account
    }

    func resetPassword(
        _ lookup: EmailCodeLookup, newHash: String, maxAttempts: Int, at time: Date
    ) async throws
        -> (userID: String, revokedSessions: [String])?
    {
        let result: (String, [String])? = try await self.database.transaction { sql in
            guard let userID = try await Self.spendCode(.reset, lookup, maxAttempts: maxAttempts, at: time, on: sql) else { return nil }
            try await sql.raw(
                """
                UPDATE email_accounts SET password_hash = \(bind: newHash), password_changed_at = \(bind: time.stored),
                    verified_at = COALESCE(verified_at, \(bind: time.stored))
                WHERE user_id = \(bind: userID)
                """
            ).run()
            // A reset ends every session: whoever knew the old password is out.
            try await sql.raw("DELETE FROM email_codes WHERE user_id = \(bind: userID)").run()
            return (userID, try await Self.revokeSessions(where: "user_id = \(bind: userID)", reason: "password_reset", at: time, on: sql))
        }
        if let result { self.profiles.invalidate(userID: result.0) }
        return result.map { (userID: $0.0, revokedSessions: $0.1) }
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
            guard let account = try await sql.raw("SELECT user_id FROM email_accounts WHERE email_key = \(bind: key)").first() else {
                return nil
            }
            let userID = try account.string("user_id")
            try await Self.serialize(on: "email-code:" + userID, sql)
            guard
                let row = try await sql.raw(
                    "SELECT code_hash, attempts, expires_at FROM email_codes WHERE user_id = \(bind: userID) AND purpose = \(bind: purpose.rawValue)"
                ).first()
            else { return nil }
            if try row.date("expires_at") <= time {
                try await sql.raw("DELETE FROM email_codes WHERE user_id = \(bind: userID) AND purpose = \(bind: purpose.rawValue)").run()
                return nil
            }
            if Secret.constantTimeEquals(try row.string("code_hash"), codeHash(userID)) {
                try await sql.raw("DELETE FROM email_codes WHERE user_id = \(bind: userID) AND purpose = \(bind: purpose.rawValue)").run()
                return userID
            }
            let attempts = try row.decode(column: "attempts", as: Int.self) + 1
            if attempts >= maxAttempts {
                try await sql.raw("DELETE FROM email_codes WHERE user_id = \(bind: userID) AND purpose = \(bind: purpose.rawValue)").run()
            } else {
                try await sql.raw(
                    "UPDATE email_codes SET attempts = \(bind: attempts) WHERE user_id = \(bind: userID) AND purpose = \(bind: purpose.rawValue)"
                ).run()
            }
            return nil
        }
    }

    func setPasswordHash(
        userID: String, hash: String, expectedHash: String?, revokingSessionsExcept keeping: String?, reason: String, at time: Date
    ) async throws -> [String]? {
        let revoked: [String]? = try await self.database.transaction { sql in
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
            guard !reason.isEmpty else { return [] }
            try await sql.raw("DELETE FROM email_codes WHERE user_id = \(bind: userID) AND purpose = \(bind: EmailCodePurpose.reset.rawValue)").run()
            return try await Self.revokeSessions(
                where: "user_id = \(bind: userID) AND id <> \(bind: keeping ?? "")", reason: reason, at: time, on: sql)
        }
        return revoked
    }

    package func markEmailVerified(userID: String, at time: Date) async throws -> Bool {
        let done = try await self.database.transaction { sql in
            try await sql.raw(
                """
                UPDATE email_accounts SET verified_at = COALESCE(verified_at, \(bind: time.stored)) WHERE user_id = \(bind: userID)
                RETURNING user_id
                """
            ).first() != nil
        }
        if done { self.profiles.invalidate(userID: userID) }
        return done
    }

    static func emailAccount(from row: any SQLRow) throws -> EmailAccountRecord {
        EmailAccountRecord(
            userID: try row.string("user_id"), email: try row.string("email"), emailKey: try row.string("email_key"),
            passwordHash: try row.string("password_hash"), verifiedAt: try row.optionalDate("verified_at"), createdAt: try row.date("created_at"))
    }
}
