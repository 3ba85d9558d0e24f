import Foundation
import Logging
import SQLKit

/// Who did a support action, and from where: a person at the `latchkey` CLI (`cli:<login>`, from `cli on <host>`) or
/// signed in to the admin console (`admin:<email>`, from the client's IP address).
public struct AuditActor: Sendable, Equatable {
    /// `cli:<login>` or `admin:<email>`.
    public var name: String
    /// `cli on <host>`, or the client's address.
    public var source: String

    public init(name: String, source: String) {
        self.name = name
        self.source = source
    }

    /// The person running this `latchkey` process: the login name from `LOGNAME`/`USER` (else the account's name), on this host.
    public static func commandLine(environment: [String: String] = ProcessInfo.processInfo.environment) -> AuditActor {
        let account = getpwuid(getuid()).flatMap { $0.pointee.pw_name.map { String(cString: $0) } }
        let login = [environment["LOGNAME"], environment["USER"], account].compactMap { $0 }.first { !$0.isEmpty } ?? "uid \(getuid())"
        return AuditActor(name: "cli:\(login)", source: "cli on \(ProcessInfo.processInfo.hostName)")
    }
}

/// One entry of the audit log: who did what, to what, when and from where. `details` never holds a secret (an access
/// code is recorded by its ID, a password not at all).
public struct AuditEvent: Sendable, Equatable {
    public var id: Int
    public var at: Date
    public var actor: String
    public var action: String
    public var target: String
    public var source: String
    public var details: String?
}

/// Which audit events to read: newest first, at most `limit`, older than the event `before` (a page's cursor).
public struct AuditQuery: Sendable, Equatable {
    public var since: Date?
    /// Actions equal to it or under it (`user` matches `user.delete` and `user.budget.set`).
    public var action: String?
    /// The actor's name or the target contains it (case-insensitive).
    public var text: String?
    public var before: Int?
    public var limit: Int

    public init(since: Date? = nil, action: String? = nil, text: String? = nil, before: Int? = nil, limit: Int = 100) {
        self.since = since
        self.action = action
        self.text = text
        self.before = before
        self.limit = limit
    }
}

/// The actions the audit log records (the `action` column).
public enum AuditAction {
    public static let accessCodeIssue = "access_code.issue"
    public static let accessCodeRevoke = "access_code.revoke"
    public static let deviceReset = "device.reset"
    /// `latchkey app-attest debug-token create`: a debug token minted (its ID and name, never the token).
    public static let appAttestDebugTokenCreate = "app_attest.debug_token_created"
    /// `latchkey app-attest debug-token revoke <id>`.
    public static let appAttestDebugTokenRevoke = "app_attest.debug_token_revoked"
    /// A debug token stood in for an attestation (register-device or guest); target: the device.
    public static let appAttestDebugTokenUse = "app_attest.debug_token_used"
    public static let keyRotate = "key.rotate"
    public static let masterKeyRotate = "master_key.rotate"
    public static let keyRevoke = "key.revoke"
    public static let outboxRetry = "outbox.retry"
    /// `latchkey webhooks retry <event-id>`: the event's pending and failed deliveries due again now.
    public static let webhooksRetry = "webhooks.retry"
    /// `latchkey webhooks send-test <endpoint>`: a `webhook.test` event queued for one endpoint.
    public static let webhooksSendTest = "webhooks.send_test"
    /// `latchkey webhooks enable <name>`: an endpoint disabled by a 410 enabled again.
    public static let webhooksEnable = "webhooks.enable"
    public static let userDelete = "user.delete"
    public static let userFreeID = "user.free_id"
    public static let userBudgetSet = "user.budget.set"
    public static let userSessionsRevoke = "user.sessions.revoke"
    public static let sessionRevoke = "session.revoke"
    public static let userIdentityUnlink = "user.identity.unlink"
    public static let userEmailVerify = "user.email.verify"
    public static let userEmailUnset = "user.email.unset"
    public static let userPasswordSet = "user.password.set"
    public static let adminCreate = "admin.create"
    public static let adminRemove = "admin.remove"
    /// An existing admin account was given another console role (`latchkey admin create --role`).
    public static let adminRoleSet = "admin.role.set"
    /// Support mailed a user a new verification code from the console.
    public static let userVerificationResend = "user.email.verification_resend"
    /// Support mailed a user a password reset code from the console.
    public static let userPasswordReset = "user.password.reset_sent"
    public static let adminSignIn = "admin.sign_in"
    public static let adminSignOut = "admin.sign_out"
    /// Support removed a user's second factors (`latchkey users mfa-reset`, the console's button).
    public static let userMFAReset = "user.mfa.reset"
    /// Support removed an admin's second factor (`latchkey admin mfa-reset`).
    public static let adminMFAReset = "admin.mfa.reset"
    /// An admin confirmed a TOTP factor in the console.
    public static let adminMFAEnable = "admin.mfa.enable"
    /// A user confirmed a TOTP factor (the actor is `user:<id>`).
    public static let mfaEnable = "mfa.enable"
    /// A user removed a factor.
    public static let mfaDisable = "mfa.disable"
    /// A user signed in or stepped up with a recovery code.
    public static let mfaRecoveryCodeUse = "mfa.recovery_code.use"
    /// A user replaced their recovery codes.
    public static let mfaRecoveryCodesRegenerate = "mfa.recovery_codes.regenerate"
    /// A user added a passkey (the actor is `user:<id>`; the details name the passkey's ID, never its credential).
    public static let passkeyAdd = "passkey.add"
    /// A passkey was removed: by its user (`user:<id>`) or by support (`admin:<email>`, `cli:<login>`).
    public static let passkeyRemove = "passkey.remove"
    /// A user signed in with a passkey.
    public static let passkeySignIn = "passkey.sign_in"
    /// An assertion's signature counter did not increase: the passkey may have been cloned (refused).
    public static let passkeyCloneSuspected = "passkey.clone_suspected"
    /// A session was started from an access code (support's own door: never gated by a second factor).
    public static let accessCodeExchange = "access_code.exchange"
    /// The app's backend read a user (`GET /api/v1/backend/users/{id}`; the actor is `backend` or `backend:<key name>`).
    public static let userRead = "user.read"
    /// The app's backend set a user's `app_metadata` (the details give its size, never its content).
    public static let userAppMetadataSet = "user.app_metadata.set"
    /// The user was disabled (by the backend or `latchkey users disable`): every session ended.
    public static let userDisable = "user.disable"
    /// The user was enabled again.
    public static let userEnable = "user.enable"
    /// The app's backend asked the user's apps to refresh their claims now.
    public static let userClaimsRefresh = "user.claims.refresh"
}

extension AuditActor {
    /// A user acting on their own account through the API.
    static func user(_ userID: String) -> AuditActor { AuditActor(name: "user:\(userID)", source: "api") }
}

/// The audit log (`audit_events`): support actions of the CLI and the admin console. Written after an action
/// succeeded; read by `latchkey audit list` and the console's audit page.
public final class AuditLog: Sendable {
    let store: SQLLatchkeyStore
    let clock: any WallClock
    let logger: Logger

    init(store: SQLLatchkeyStore, clock: any WallClock, logger: Logger) {
        self.store = store
        self.clock = clock
        self.logger = logger
    }

    /// Records that `actor` did `action` to `target`.
    public func record(_ actor: AuditActor, _ action: String, target: String, details: String? = nil) async throws {
        try await self.store.recordAuditEvent(actor: actor, action: action, target: target, details: details, at: self.clock.now())
        self.logger.info("audit", metadata: ["actor": "\(actor.name)", "action": "\(action)", "target": "\(target)"])
    }

    /// The events `query` selects, newest first.
    public func events(_ query: AuditQuery) async throws -> [AuditEvent] {
        try await self.store.auditEvents(query)
    }
}

extension SQLLatchkeyStore {
    func recordAuditEvent(actor: AuditActor, action: String, target: String, details: String?, at time: Date) async throws {
        try await self.database.transaction { sql in
            try await sql.raw(
                """
                INSERT INTO audit_events (at, actor, action, target, source, details)
                VALUES (\(bind: time.stored), \(bind: actor.name), \(bind: action), \(bind: target), \(bind: actor.source), \(bind: details))
                """
            ).run()
        }
    }

    func auditEvents(_ query: AuditQuery) async throws -> [AuditEvent] {
        var conditions: [SQLQueryString] = []
        if let since = query.since { conditions.append("at >= \(bind: since.stored)") }
        if let action = query.action, !action.isEmpty {
            conditions.append("(action = \(bind: action) OR action LIKE \(bind: Self.likePrefix(action)) ESCAPE '\\')")
        }
        if let text = query.text?.lowercased(), !text.isEmpty {
            let pattern = "%" + Self.likeEscaped(text) + "%"
            conditions.append("(LOWER(actor) LIKE \(bind: pattern) ESCAPE '\\' OR LOWER(target) LIKE \(bind: pattern) ESCAPE '\\')")
        }
        if let before = query.before { conditions.append("id < \(bind: before)") }
        let filter: SQLQueryString = conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND ")
        let statement: SQLQueryString = "SELECT * FROM audit_events" + filter + " ORDER BY id DESC LIMIT \(bind: max(0, query.limit))"
        return try await self.database.read { sql in
            try await sql.raw(statement).all().map { row in
                AuditEvent(
                    id: try row.decode(column: "id", as: Int.self), at: try row.date("at"), actor: try row.string("actor"),
                    action: try row.string("action"), target: try row.string("target"), source: try row.string("source"),
                    details: try row.optionalString("details"))
            }
        }
    }

    private static func likePrefix(_ action: String) -> String { Self.likeEscaped(action) + ".%" }
}
