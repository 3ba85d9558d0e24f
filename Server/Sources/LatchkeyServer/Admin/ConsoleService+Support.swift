import Foundation
import SQLKit

/// Support's user actions and the outbox, each audited with the admin who did it.
extension ConsoleService {
    func users(_ filter: AdminUserFilter, limit: Int, offset: Int) async throws -> [AdminUserRow] {
        try await self.store.adminUsers(filter, limit: limit, offset: offset)
    }

    func providers() async throws -> [String] { try await self.store.adminProviders() }

    /// Disables the user as `latchkey users disable` does (every session ends, their sockets close, sign-ins and
    /// refreshes answer 403 `user_disabled`); audited `user.disable`. False when they were disabled already.
    func disable(_ user: String, by actor: AuditActor) async throws -> Bool {
        try await self.requireUser(user)
        guard try await self.store.disabledAt(userID: user) == nil else { return false }
        _ = try await self.backend.disable(userID: user, by: actor)
        return true
    }

    /// Enables the user again (their ended sessions stay ended); audited `user.enable`. False when they were not disabled.
    func enable(_ user: String, by actor: AuditActor) async throws -> Bool {
        try await self.requireUser(user)
        return try await self.backend.enable(userID: user, by: actor)
    }

    /// Mails the user a new verification code; false when they have no unverified address.
    func resendVerification(_ user: String, by actor: AuditActor) async throws -> Bool {
        try await self.requireUser(user)
        guard try await self.accounts.resendVerification(userID: user) != nil else { return false }
        try await self.audit.record(actor, AuditAction.userVerificationResend, target: "user \(user)")
        return true
    }

    /// Mails the user a password reset code; false when their address may not reset (not verified).
    func sendPasswordReset(_ user: String, by actor: AuditActor) async throws -> Bool {
        try await self.requireUser(user)
        guard try await self.accounts.sendPasswordReset(userID: user) != nil else { return false }
        try await self.audit.record(actor, AuditAction.userPasswordReset, target: "user \(user)")
        return true
    }

    /// Marks the user's address verified as `latchkey users verify-email` does; audited `user.email.verify`.
    func markEmailVerified(_ user: String, by actor: AuditActor) async throws {
        try await self.requireUser(user)
        try await self.accounts.markVerified(userID: user)
        try await self.audit.record(actor, AuditAction.userEmailVerify, target: "user \(user)", details: "from the console")
    }

    /// A page of the outbox, newest first; `state` `pending`, `sent` or `failed` (nil: all).
    func outbox(state: String?, limit: Int, offset: Int) async throws -> [OutboxEntry] {
        try await self.store.outboxPage(state: state, limit: limit, offset: offset)
    }

    /// Puts the failed mail `id` back to pending, due now with fresh attempts; audited `outbox.retry`. False when it is
    /// not a failed mail (sent, pending, or its message gone). ``AdminPageError/notFound`` when there is no such mail.
    func retryMail(_ id: Int, by actor: AuditActor) async throws -> Bool {
        guard let mail = try await self.store.outboxEntry(id: id) else { throw AdminPageError.notFound }
        guard mail.state == "failed", try await self.store.retryMails(id: id, at: self.clock.now()) == 1 else { return false }
        try await self.audit.record(actor, AuditAction.outboxRetry, target: "mail \(id)", details: "\(mail.purpose) to \(mail.recipient)")
        self.outboxSender?.wake()
        return true
    }
}

extension SQLLatchkeyStore {
    func outboxPage(state: String?, limit: Int, offset: Int) async throws -> [OutboxEntry] {
        let filter: SQLQueryString =
            switch state {
            case "sent": "WHERE sent_at IS NOT NULL"
            case "failed": "WHERE sent_at IS NULL AND failed_at IS NOT NULL"
            case "pending": "WHERE sent_at IS NULL AND failed_at IS NULL"
            default: ""
            }
        return try await self.database.read { sql in
            try await sql.raw("SELECT * FROM outbox \(filter) ORDER BY id DESC LIMIT \(bind: limit) OFFSET \(bind: offset)").all()
                .map(Self.outboxEntry(from:))
        }
    }

    func outboxEntry(id: Int) async throws -> OutboxEntry? {
        try await self.database.read { sql in
            try await sql.raw("SELECT * FROM outbox WHERE id = \(bind: id)").first().map(Self.outboxEntry(from:))
        }
    }
}
