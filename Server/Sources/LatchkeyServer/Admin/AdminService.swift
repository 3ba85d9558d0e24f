import Crypto
import Foundation
import LatchkeyPasswords
import Logging
import SQLKit

/// An admin console account (never an app user).
package struct AdminAccount: Sendable, Equatable {
    package var id: String
    package var email: String
    /// False until the setup link was used.
    package var hasPassword: Bool
    package var createdAt: Date
    package var lastLoginAt: Date?
    /// Whether the account has a confirmed TOTP factor.
    package var hasSecondFactor: Bool
    /// What the account may do in the console.
    package var role: AdminRole
}

/// A signed-in console session: its admin, how far its sign-in got, and the CSRF token every form of the session carries.
package struct AdminSession: Sendable, Equatable {
    package var adminID: String
    package var email: String
    package var csrf: String
    /// The SHA-256 of the session's cookie: the session's key in the store.
    package var idHash: String
    package var stage: Stage
    /// Whether the admin has a confirmed TOTP factor.
    package var hasSecondFactor: Bool
    /// The session cookie's value (only in the answer to a sign-in, to set the cookie).
    package var cookie: String?
    /// What the admin may do, read from their account on every request (a changed role applies at once).
    package var role: AdminRole = .viewer

    /// How far a session's sign-in got: only a ``Stage/signedIn`` session uses the console; the others can do one thing.
    package enum Stage: Sendable, Hashable, CaseIterable {
        /// The password and, when the admin has a factor, its code: the whole console.
        case signedIn
        /// The password of an admin with a factor: the code page only (for ``AdminService/codeEntryLifetime``).
        case needsCode
        /// The password of an admin without a factor while `admin.require-mfa`: the enrolment page only.
        case needsEnrolment

        /// The page a session at this stage is sent to.
        var home: String {
            switch self {
            case .signedIn: "/admin"
            case .needsCode: "/admin/sign-in/code"
            case .needsEnrolment: "/admin/account/second-factor"
            }
        }
    }
}

/// Admin accounts and their sessions: created by `latchkey admin create` with a one-time setup link, passwords hashed
/// as app passwords are (Argon2id on the hashing threads, the same policy), sign-ins limited as the app's are (per
/// account and per client), sessions kept by the SHA-256 of their cookie with an idle timeout and a lifetime.
package final class AdminService: Sendable {
    let store: SQLLatchkeyStore
    let pool: PasswordHashingPool
    let limiter: RateLimiter
    let limits: AccountLimits
    let configuration: AdminConfiguration
    let clock: any WallClock
    let csrfKey: SymmetricKey
    let masterKey: MasterKey
    /// What an authenticator app shows as the issuer of an admin's factor.
    let issuer: String
    let logger: Logger
    /// How long a setup link works.
    static let setupLifetime: TimeInterval = 86_400
    /// How long a sign-in that passed the password waits for the code.
    static let codeEntryLifetime: TimeInterval = 300

    init(
        store: SQLLatchkeyStore, pool: PasswordHashingPool, limiter: RateLimiter, limits: AccountLimits, configuration: AdminConfiguration,
        clock: any WallClock, csrfKey: SymmetricKey, masterKey: MasterKey, issuer: String, logger: Logger
    ) {
        self.store = store
        self.pool = pool
        self.limiter = limiter
        self.limits = limits
        self.configuration = configuration
        self.clock = clock
        self.csrfKey = csrfKey
        self.masterKey = masterKey
        self.issuer = issuer
        self.logger = logger
    }

    // MARK: Accounts (CLI)

    /// Creates an admin account for `email` with `role` (nil: `support`), or gives an existing one a new setup link (its
    /// password is cleared and its sessions end) and, when `role` is given, that role; returns the setup token (shown
    /// once, in the link). Failed sign-ins counted against the address before are forgotten: a lockout holds back
    /// sign-ins only, never the admin named here (anyone can fail sign-ins with an address, before or after it has an
    /// account).
    package func createAccount(email: String, role: AdminRole? = nil) async throws -> (account: AdminAccount, setupToken: String) {
        let address = try EmailAddress(parsing: email)
        let token = Secret.generate()
        let now = self.clock.now()
        let account = try await self.store.upsertAdminAccount(
            id: UUID().uuidString.lowercased(), email: address.address, emailKey: address.key, role: role, setupHash: Secret.hash(token),
            setupExpiresAt: now.addingTimeInterval(Self.setupLifetime), at: now)
        try await self.limiter.reset(self.limits.loginFailures, key: "admin " + address.key)
        return (account, token)
    }

    package func accounts() async throws -> [AdminAccount] { try await self.store.adminAccounts() }

    /// Removes the admin account of `email` with its sessions; false when there is none.
    package func removeAccount(email: String) async throws -> Bool {
        try await self.store.removeAdminAccount(emailKey: EmailAddress.lookupKey(email))
    }

    // MARK: Setup and sign-in

    /// The account a setup token belongs to, while the token is valid.
    package func setupAccount(token: String) async throws -> AdminAccount? {
        try await self.store.adminAccount(setupHash: Secret.hash(token), at: self.clock.now())
    }

    /// Sets the password of the setup link's account (the link is spent) and signs it in.
    package func completeSetup(token: String, password: String, confirmation: String, ip: String) async throws -> AdminSession {
        guard let account = try await self.setupAccount(token: token) else { throw ServiceError.invalidCode }
        guard password == confirmation else { throw ServiceError.invalidRequest("The two passwords differ.") }
        let normalized = PasswordPolicy.normalize(password)
        do {
            try PasswordPolicy.check(normalized, email: try? EmailAddress(parsing: account.email))
        } catch let error where error.kind == .weakPassword {
            throw error
        } catch { throw ServiceError.invalidCode }
        let hash = try await self.hash(normalized)
        guard try await self.store.setAdminPassword(setupHash: Secret.hash(token), hash: hash, at: self.clock.now()) else {
            throw ServiceError.invalidCode
        }
        return try await self.startSession(account, ip: ip)
    }

    /// Signs in with email and password: the same refusal (and the same time: a dummy hash is checked) for an unknown
    /// address and a wrong password; 10 failures in 15 minutes hold the account back, as for app accounts. Attempts per
    /// client count an IPv6 client by its /64, as the API's limits do (one subscriber gets a whole /64).
    package func login(email: String, password: String, ip: String) async throws -> AdminSession {
        if case .denied(let resetAt) = try await self.limiter.hit(self.limits.passwordLogin, key: "admin-ip " + ClientNetwork.key(of: ip)) {
            throw self.tooManyAttempts(until: resetAt)
        }
        let key = EmailAddress.lookupKey(email)
        guard let account = try await self.checkPassword(password, emailKey: key) else { throw ServiceError.invalidCredentials }
        return try await self.startSession(account, ip: ip)
    }

    /// The account of `emailKey` when `password` is its password, else nil; one attempt against `limits.login-failures`,
    /// counted before the hash is checked, so of concurrent wrong passwords at most the limit are tried (the rest: 429).
    private func checkPassword(_ password: String, emailKey key: String) async throws -> AdminAccount? {
        let policy = self.limits.loginFailures
        return try await self.limiter.attempting(policy, key: "admin " + key, refusal: self.tooManyAttempts(until:), failed: { $0 == nil }) {
            let stored = try await self.store.adminAccount(emailKey: key)
            let verification: PasswordHasher.Verification
            do { verification = try await self.pool.verify(PasswordPolicy.normalize(password), against: stored?.hash) } catch {
                throw ServiceError.busy
            }
            return verification == .invalid ? nil : stored?.account
        }
    }

    private func tooManyAttempts(until resetAt: Date) -> any Error {
        ServiceError.tooManyAttempts(retryAfter: RateLimiter.seconds(until: resetAt, from: self.clock.now()))
    }

    /// Checks the password the admin of `session` re-entered before a sensitive action (deleting a user, rotating the
    /// signing key, issuing an access code), so a session cookie alone cannot do them. Wrong ones are limited per admin as
    /// sign-ins are per address (`limits.login-failures`), in a count of their own: failed sign-ins with the address lock
    /// sign-ins only, never the signed-in admin's actions.
    package func confirmPassword(_ password: String, session: AdminSession) async throws {
        let key = EmailAddress.lookupKey(session.email)
        let confirmed = try await self.limiter.attempting(
            self.limits.loginFailures, key: "admin-confirm " + session.adminID, refusal: self.tooManyAttempts(until:), failed: { !$0 }
        ) {
            guard let stored = try await self.store.adminAccount(emailKey: key), stored.account.id == session.adminID else { return false }
            do { return try await self.pool.verify(PasswordPolicy.normalize(password), against: stored.hash) != .invalid } catch {
                throw ServiceError.busy
            }
        }
        guard confirmed else { throw ServiceError.invalidCredentials }
    }

    /// The session of a cookie, while it is neither idle past `admin.idle-timeout` nor older than its lifetime (nor, while
    /// it waits for the code, older than ``codeEntryLifetime``); using it keeps it alive.
    package func session(cookie: String) async throws -> AdminSession? {
        guard !cookie.isEmpty, cookie.count <= 100 else { return nil }
        let now = self.clock.now()
        let idHash = Secret.hash(cookie)
        guard
            let touched = try await self.store.touchAdminSession(
                idHash: idHash, idleSince: now.addingTimeInterval(-self.configuration.idleTimeout), at: now)
        else { return nil }
        let session = self.session(touched.account, idHash: idHash, cookie: cookie, secondStepPassed: touched.secondStepPassed)
        if session.stage == .needsCode, touched.createdAt <= now.addingTimeInterval(-Self.codeEntryLifetime) { return nil }
        return session
    }

    /// The session `idHash` of `account`, at the stage its sign-in got to.
    private func session(_ account: AdminAccount, idHash: String, cookie: String, secondStepPassed: Bool) -> AdminSession {
        let stage: AdminSession.Stage =
            if account.hasSecondFactor { secondStepPassed ? .signedIn : .needsCode } else {
                self.configuration.requireMFA ? .needsEnrolment : .signedIn
            }
        return AdminSession(
            adminID: account.id, email: account.email, csrf: self.csrfToken(cookie: cookie), idHash: idHash, stage: stage,
            hasSecondFactor: account.hasSecondFactor, cookie: nil, role: account.role)
    }

    /// Ends the session of a cookie.
    package func logout(cookie: String) async throws {
        try await self.store.deleteAdminSession(idHash: Secret.hash(cookie))
    }

    /// The CSRF token of a session: an HMAC of its cookie, so it needs no storage and is worthless without the cookie.
    package func csrfToken(cookie: String) -> String {
        Data(HMAC<SHA256>.authenticationCode(for: Data("admin csrf:\(Secret.hash(cookie))".utf8), using: self.csrfKey)).base64URLEncodedString()
    }

    /// The CSRF token of the sign-in and setup forms, bound to a pre-session cookie.
    package func preSessionCSRF(nonce: String) -> String {
        Data(HMAC<SHA256>.authenticationCode(for: Data("admin login csrf:\(nonce)".utf8), using: self.csrfKey)).base64URLEncodedString()
    }

    /// A session for the admin who gave the password: signed in, or waiting for the code or the enrolment.
    private func startSession(_ account: AdminAccount, ip: String) async throws -> AdminSession {
        let cookie = Secret.generate()
        let now = self.clock.now()
        try await self.store.createAdminSession(
            idHash: Secret.hash(cookie), adminID: account.id, ip: ip, expiresAt: now.addingTimeInterval(self.configuration.sessionLifetime), at: now)
        var session = self.session(account, idHash: Secret.hash(cookie), cookie: cookie, secondStepPassed: false)
        session.cookie = cookie
        self.logger.info("admin password accepted", metadata: ["admin": "\(account.email)", "ip": "\(ip)", "stage": "\(session.stage)"])
        return session
    }

    private func hash(_ normalized: String) async throws -> String {
        do { return try await self.pool.hash(normalized) } catch { throw ServiceError.busy }
    }
}

extension SQLLatchkeyStore {
    static func adminAccount(from row: any SQLRow) throws -> AdminAccount {
        AdminAccount(
            id: try row.string("id"), email: try row.string("email"), hasPassword: try row.optionalString("password_hash") != nil,
            createdAt: try row.date("created_at"), lastLoginAt: try row.optionalDate("last_login_at"),
            hasSecondFactor: try row.optionalDate("totp_confirmed_at") != nil,
            // An unknown value (a newer server's role) reads as the least: nothing is granted by mistake.
            role: try row.optionalString("role").flatMap(AdminRole.init(rawValue:)) ?? .viewer)
    }

    func upsertAdminAccount(
        id: String, email: String, emailKey: String, role: AdminRole?, setupHash: String, setupExpiresAt: Date, at time: Date
    ) async throws
        -> AdminAccount
    {
        try await self.database.transaction { sql in
            if let existing = try await sql.raw("SELECT id FROM admin_accounts WHERE email_key = \(bind: emailKey)").first() {
                let id = try existing.string("id")
                try await sql.raw(
                    """
                    UPDATE admin_accounts SET password_hash = NULL, setup_hash = \(bind: setupHash),
                        setup_expires_at = \(bind: setupExpiresAt.stored) WHERE id = \(bind: id)
                    """
                ).run()
                if let role {
                    try await sql.raw("UPDATE admin_accounts SET role = \(bind: role.rawValue) WHERE id = \(bind: id)").run()
                }
                try await sql.raw("DELETE FROM admin_sessions WHERE admin_id = \(bind: id)").run()
            } else {
                try await sql.raw(
                    """
                    INSERT INTO admin_accounts (id, email, email_key, role, setup_hash, setup_expires_at, created_at)
                    VALUES (\(bind: id), \(bind: email), \(bind: emailKey), \(bind: (role ?? .support).rawValue), \(bind: setupHash),
                            \(bind: setupExpiresAt.stored), \(bind: time.stored))
                    """
                ).run()
            }
            guard let row = try await sql.raw("SELECT * FROM admin_accounts WHERE email_key = \(bind: emailKey)").first() else {
                throw ServiceError.notFound("The admin account vanished.")
            }
            return try Self.adminAccount(from: row)
        }
    }

    func adminAccounts() async throws -> [AdminAccount] {
        try await self.database.read { sql in
            try await sql.raw("SELECT * FROM admin_accounts ORDER BY email_key").all().map(Self.adminAccount(from:))
        }
    }

    func removeAdminAccount(emailKey: String) async throws -> Bool {
        try await self.database.transaction { sql in
            guard let row = try await sql.raw("SELECT id FROM admin_accounts WHERE email_key = \(bind: emailKey)").first() else { return false }
            let id = try row.string("id")
            try await sql.raw("DELETE FROM admin_sessions WHERE admin_id = \(bind: id)").run()
            try await sql.raw("DELETE FROM admin_accounts WHERE id = \(bind: id)").run()
            return true
        }
    }

    func adminAccount(setupHash: String, at time: Date) async throws -> AdminAccount? {
        try await self.database.read { sql in
            try await sql.raw(
                "SELECT * FROM admin_accounts WHERE setup_hash = \(bind: setupHash) AND setup_expires_at > \(bind: time.stored)"
            ).first().map(Self.adminAccount(from:))
        }
    }

    func adminAccount(emailKey: String) async throws -> (account: AdminAccount, hash: String?)? {
        try await self.database.read { sql in
            try await sql.raw("SELECT * FROM admin_accounts WHERE email_key = \(bind: emailKey)").first().map {
                (try Self.adminAccount(from: $0), try $0.optionalString("password_hash"))
            }
        }
    }

    /// Sets the password of the account whose unexpired setup link this is, spending the link.
    func setAdminPassword(setupHash: String, hash: String, at time: Date) async throws -> Bool {
        try await self.database.transaction { sql in
            let rows = try await sql.raw(
                """
                UPDATE admin_accounts SET password_hash = \(bind: hash), setup_hash = NULL, setup_expires_at = NULL
                WHERE setup_hash = \(bind: setupHash) AND setup_expires_at > \(bind: time.stored) RETURNING id
                """
            ).all()
            return !rows.isEmpty
        }
    }

    func createAdminSession(idHash: String, adminID: String, ip: String, expiresAt: Date, at time: Date) async throws {
        try await self.database.transaction { sql in
            try await sql.raw(
                """
                INSERT INTO admin_sessions (id_hash, admin_id, created_at, last_seen_at, expires_at, ip)
                VALUES (\(bind: idHash), \(bind: adminID), \(bind: time.stored), \(bind: time.stored), \(bind: expiresAt.stored), \(bind: ip))
                """
            ).run()
            try await sql.raw("UPDATE admin_accounts SET last_login_at = \(bind: time.stored) WHERE id = \(bind: adminID)").run()
            // Ended sessions go as new ones come.
            try await sql.raw("DELETE FROM admin_sessions WHERE expires_at <= \(bind: time.stored)").run()
        }
    }

    /// The account of a live session (not idle since `idleSince`, not expired), when the session began and whether it
    /// passed the second step, marking it used now.
    func touchAdminSession(
        idHash: String, idleSince: Date, at time: Date
    ) async throws -> (account: AdminAccount, createdAt: Date, secondStepPassed: Bool)? {
        try await self.database.transaction { sql in
            let touched = try await sql.raw(
                """
                UPDATE admin_sessions SET last_seen_at = \(bind: time.stored)
                WHERE id_hash = \(bind: idHash) AND last_seen_at > \(bind: idleSince.stored) AND expires_at > \(bind: time.stored)
                RETURNING admin_id, created_at, mfa_passed
                """
            ).first()
            guard let touched else { return nil }
            let adminID = try touched.string("admin_id")
            guard
                let account = try await sql.raw("SELECT * FROM admin_accounts WHERE id = \(bind: adminID) AND password_hash IS NOT NULL").first()
                    .map(Self.adminAccount(from:))
            else { return nil }
            return (account, try touched.date("created_at"), try touched.decode(column: "mfa_passed", as: Int.self) != 0)
        }
    }

    func deleteAdminSession(idHash: String) async throws {
        try await self.database.transaction { sql in try await sql.raw("DELETE FROM admin_sessions WHERE id_hash = \(bind: idHash)").run() }
    }
}
