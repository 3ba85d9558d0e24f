import Configuration
import Crypto
import Foundation
import LatchkeyAPI
import LatchkeyPasswords
import Logging

/// Email and password accounts: registration (attached to a device user or a new one), verification by code or link,
/// sign-in, and password reset and change. Mails go through the outbox, in the transaction of what caused them.
package final class EmailAccountService: Sendable {
    let store: any EmailAccountStore
    let pool: PasswordHashingPool
    let sessions: SessionService
    let limiter: RateLimiter
    let limits: AccountLimits
    let masterKey: MasterKey
    let templates: MailTemplates
    let configuration: EmailConfiguration
    /// Where the mails' links point: `email.link-base-url`, else the issuer.
    let linkBase: String
    let clock: any WallClock
    let logger: Logger
    /// Told when a mail is queued; nil without SMTP (the CLI never sends).
    let sender: OutboxSender?
    private let codeKey: SymmetricKey

    /// How long a verification code stays valid.
    static let verificationLifetime: TimeInterval = 15 * 60
    /// How long a reset code stays valid.
    static let resetLifetime: TimeInterval = 30 * 60
    /// Wrong codes that spend a code.
    static let maxCodeAttempts = 5

    init(
        store: any EmailAccountStore, pool: PasswordHashingPool, sessions: SessionService, limiter: RateLimiter,
        limits: AccountLimits, masterKey: MasterKey, templates: MailTemplates, configuration: EmailConfiguration, linkBase: String,
        clock: any WallClock, logger: Logger, sender: OutboxSender?
    ) {
        self.store = store
        self.pool = pool
        self.sessions = sessions
        self.limiter = limiter
        self.limits = limits
        self.masterKey = masterKey
        self.templates = templates
        self.configuration = configuration
        var base = linkBase
        while base.hasSuffix("/") { base.removeLast() }
        self.linkBase = base
        self.clock = clock
        self.logger = logger
        self.sender = sender
        self.codeKey = masterKey.derivedKey(purpose: "email code")
    }

    // MARK: Registration and verification

    /// Attaches `email` and `password` to the user of `token` (a session showing a recent sign-in: a new way to sign in
    /// is as sensitive as linking), or to a new user without one, and mails a verification code.
    ///
    /// An address another user verified is answered the same way (unless `email.reveal-existing`): it is stored
    /// unverified and can never be verified, and its owner is mailed that someone tried to sign up with it instead.
    package func register(
        email: String, password: String, attachingTo token: VerifiedToken?, proof: VerifiedProof? = nil
    ) async throws -> EmailAccountResponse {
        let address = try Self.parse(email)
        let normalized = PasswordPolicy.normalize(password)
        try PasswordPolicy.check(normalized, email: address)
        let userID: String
        if let token {
            // The route lets only a session's token through (RequireToken); it must be a recent sign-in.
            try await self.sessions.requireRecentAuthentication(token, proof: proof)
            userID = token.userID
        } else {
            userID = UUID().uuidString.lowercased()
        }
        let hash = try await self.pool.hash(normalized)
        let now = self.clock.now()
        let (code, mail) = try self.makeCode(.verify, userID: userID, address: address, at: now)
        // Counted whatever the outcome (as a code's mail always was), so the two outcomes cost the same.
        let takenMail = try await self.mayMail(address) ? try self.makeMail(.signupAttempt, to: address) : nil
        switch try await self.store.registerEmail(
            userID: userID, newUser: token == nil, email: address.address, key: address.key, passwordHash: hash, code: code, mail: mail,
            takenMail: takenMail, revealExisting: self.configuration.revealExisting, at: now)
        {
        case .created, .taken:
            self.sender?.wake()
            return EmailAccountResponse(userID: userID, email: address.address, emailVerified: false)
        case .emailTaken: throw ServiceError.emailTaken
        case .alreadySet: throw ServiceError.emailAlreadySet
        case .userGone: throw TokenRejection.revoked
        }
    }

    /// Verifies the address with the mailed code or link token.
    package func verifyEmail(_ request: VerifyEmailRequest) async throws -> EmailAccountResponse {
        let lookup = try self.lookup(token: request.token, email: request.email, code: request.code, purpose: .verify)
        guard let account = try await self.store.verifyEmail(lookup, maxAttempts: Self.maxCodeAttempts, at: self.clock.now()) else {
            throw ServiceError.invalidCode
        }
        return EmailAccountResponse(userID: account.userID, email: account.email, emailVerified: true)
    }

    /// The address the mailed link `token` went to, for the page the link opens; nil when the link names no account (spent
    /// or made up). Spends nothing: only the page's button does.
    func linkAddress(token: String, purpose: EmailCodePurpose) async throws -> String? {
        try await self.store.emailAccount(linkHash: Secret.hash(token), purpose: purpose)?.email
    }

    /// Mails a new verification code when the address has an unverified account and its mail limits allow; says
    /// nothing either way.
    package func resendVerification(email: String) async throws {
        let address = try Self.parse(email)
        guard let account = try await self.store.emailAccount(key: address.key), account.verifiedAt == nil else { return }
        guard try await self.mayMail(address) else { return }
        let now = self.clock.now()
        let (code, mail) = try self.makeCode(.verify, userID: account.userID, address: EmailAddressOf(account), at: now)
        try await self.store.issueCode(userID: account.userID, code: code, mail: mail, at: now)
        self.sender?.wake()
    }

    // MARK: Sign-in

    /// A session for the account whose address and password these are.
    package func login(email: String, password: String, proof: VerifiedProof?) async throws -> TokenPairResponse {
        let normalized = PasswordPolicy.normalize(password)
        let key = EmailAddress.lookupKey(email)
        // Counted before the hash is checked, so concurrent wrong passwords cannot all be tried (limits.login-failures).
        let (account, verification): (EmailAccountRecord?, PasswordHasher.Verification) = try await self.limiter.attempting(
            self.limits.loginFailures, key: key, refusal: self.tooManyAttempts(until:), failed: { $0.0 == nil || $0.1 == .invalid }
        ) { try await self.signInCandidate(key: key, password: normalized) }
        guard let account, verification != .invalid else { throw ServiceError.invalidCredentials }
        guard account.verifiedAt != nil else { throw ServiceError.emailNotVerified }
        if verification == .validNeedsRehash {
            let hash = try await self.pool.hash(normalized)
            _ = try await self.store.setPasswordHash(
                userID: account.userID, hash: hash, expectedHash: account.passwordHash, revokingSessionsExcept: nil, reason: "", at: self.clock.now())
        }
        return try await self.sessions.startSession(userID: account.userID, deviceID: nil, proof: proof, amr: [.password], secondFactorGate: true)
    }

    /// The account an address and password sign in to, and how the password matched. An address another account verified
    /// may also have an unverified registration (stored so that registering never says the address is taken): a password
    /// that is not the owner's but that registration's answers as for an address nobody verified, `email_not_verified`.
    /// Wherever an unverified registration is looked at, two hashes are checked (the second a dummy when there is no
    /// second candidate), so the time does not tell a taken address from a free one either.
    private func signInCandidate(key: String, password: String) async throws -> (EmailAccountRecord?, PasswordHasher.Verification) {
        let account = try await self.store.emailAccount(key: key)
        let verification = try await self.pool.verify(password, against: account?.passwordHash)
        guard let owner = account, owner.verifiedAt != nil else {
            if account != nil { _ = try await self.pool.verify(password, against: nil) }
            return (account, verification)
        }
        guard verification == .invalid, let pending = try await self.store.pendingRegistration(key: key) else { return (owner, verification) }
        let pendingVerification = try await self.pool.verify(password, against: pending.passwordHash)
        return pendingVerification == .invalid ? (owner, verification) : (pending, pendingVerification)
    }

    /// 429 `too_many_attempts` until `resetAt`, when the oldest counted failure leaves the window.
    private func tooManyAttempts(until resetAt: Date) -> any Error {
        ServiceError.tooManyAttempts(retryAfter: RateLimiter.seconds(until: resetAt, from: self.clock.now()))
    }

    // MARK: Passwords

    /// Mails a reset code when the address has an account and its mail limits allow; says nothing either way. An
    /// address attached unverified to an existing user belongs to nobody yet: it gets no reset.
    package func requestPasswordReset(email: String) async throws {
        let address = try Self.parse(email)
        guard let account = try await self.store.resettableAccount(key: address.key) else { return }
        guard try await self.mayMail(address) else { return }
        let now = self.clock.now()
        let (code, mail) = try self.makeCode(.reset, userID: account.userID, address: EmailAddressOf(account), at: now)
        try await self.store.issueCode(userID: account.userID, code: code, mail: mail, at: now)
        self.sender?.wake()
    }

    /// Sets a new password with a reset code or link token, ends every session of the user and stops every device
    /// credential (secret or bound key) of it but that of the device whose key made `proof`.
    package func resetPassword(_ request: ResetPasswordConfirmRequest, proof: VerifiedProof? = nil) async throws -> PasswordChangedResponse {
        let lookup = try self.lookup(token: request.token, email: request.email, code: request.code, purpose: .reset)
        let normalized = PasswordPolicy.normalize(request.newPassword)
        try PasswordPolicy.check(normalized, email: try await self.resetAddress(request, lookup: lookup))
        let hash = try await self.pool.hash(normalized)
        guard
            let revoked = try await self.store.resetPassword(
                lookup, newHash: hash, maxAttempts: Self.maxCodeAttempts, keepingDeviceKey: proof?.thumbprint, at: self.clock.now())
        else { throw ServiceError.invalidCode }
        return PasswordChangedResponse(userID: revoked.userID, revokedSessions: revoked.sessions.count, revokedDevices: revoked.devices)
    }

    /// The address a reset is for: the one sent with a code, or the one of the account the link belongs to (so a link
    /// cannot set the address as the password either).
    private func resetAddress(_ request: ResetPasswordConfirmRequest, lookup: EmailCodeLookup) async throws -> EmailAddress? {
        if let email = request.email { return try Self.parse(email) }
        guard case .link(let hash) = lookup, let account = try await self.store.emailAccount(linkHash: hash, purpose: .reset) else { return nil }
        return try? EmailAddress(parsing: account.email)
    }

    /// Changes the password of the token's user, given the current one; ends the user's other sessions, stops every
    /// device credential but that of the device whose key made `proof`, and tells the verified address.
    package func changePassword(
        _ request: ChangePasswordRequest, token: VerifiedToken, proof: VerifiedProof? = nil
    ) async throws -> PasswordChangedResponse {
        guard let account = try await self.store.emailAccount(userID: token.userID) else {
            throw ServiceError.notFound("This account has no password yet: add an email address and password with POST /api/v1/auth/register.")
        }
        try await self.sessions.requireStepUp(token)
        let verification = try await self.limiter.attempting(
            self.limits.loginFailures, key: account.emailKey, refusal: self.tooManyAttempts(until:), failed: { $0 == .invalid }
        ) { try await self.pool.verify(PasswordPolicy.normalize(request.currentPassword), against: account.passwordHash) }
        guard verification != .invalid else { throw ServiceError.invalidCredentials }
        let normalized = PasswordPolicy.normalize(request.newPassword)
        try PasswordPolicy.check(normalized, email: try? EmailAddress(parsing: account.email))
        let hash = try await self.pool.hash(normalized)
        let notice = try self.notice("The password of your account was changed.", to: account)
        guard
            let revoked = try await self.store.setPasswordHash(
                userID: account.userID, hash: hash, expectedHash: account.passwordHash, revokingSessionsExcept: token.sessionID,
                keepingDeviceKey: proof?.thumbprint, notice: notice, reason: "password_changed", at: self.clock.now())
        else { throw ServiceError.invalidCredentials }  // changed meanwhile by another request
        if notice != nil { self.sender?.wake() }
        return PasswordChangedResponse(userID: account.userID, revokedSessions: revoked.sessions.count, revokedDevices: revoked.devices)
    }

    /// Removes the address (and so the password) of the token's user, given a recent sign-in; ends the user's other
    /// sessions and tells the address when it was verified. Refused when it is the user's only way to sign in.
    package func removeEmail(token: VerifiedToken, proof: VerifiedProof?) async throws -> EmailRemovedResponse {
        try await self.sessions.requireRecentAuthentication(token, proof: proof)
        try await self.sessions.requireStepUp(token)
        let (account, revoked) = try await self.remove(userID: token.userID, keepingSession: token.sessionID, onlyWayIn: false)
        return EmailRemovedResponse(userID: account.userID, email: account.email, revokedSessions: revoked)
    }

    /// Mails the user's verified address that `change` happened to its ways of signing in (an identity linked or
    /// unlinked); nothing when it has none. A notice that cannot be queued is logged, never an error of what it tells of.
    package func tellSignInChanged(userID: String, _ change: String) async {
        do {
            guard let account = try await self.store.emailAccount(userID: userID), let notice = try self.notice(change, to: account) else {
                return
            }
            try await self.store.queueMail(notice, at: self.clock.now())
            self.sender?.wake()
        } catch {
            self.logger.warning("could not queue a sign-in notice", metadata: ["user_id": "\(userID)", "error": "\(type(of: error))"])
        }
    }

    /// Support (`latchkey users unset-email`): removes the user's address and ends every session of the user.
    package func unsetEmail(userID: String) async throws -> (email: String, revokedSessions: Int) {
        let (account, revoked) = try await self.remove(userID: userID, keepingSession: nil, onlyWayIn: true)
        return (account.email, revoked)
    }

    private func remove(userID: String, keepingSession: String?, onlyWayIn: Bool) async throws -> (EmailAccountRecord, Int) {
        guard let account = try await self.store.emailAccount(userID: userID) else {
            throw ServiceError.notFound("User \(userID) has no email address.")
        }
        let notice = try self.notice("The address \(account.email) was removed from your account: it no longer signs in.", to: account)
        switch try await self.store.removeEmail(
            userID: userID, keepingSession: keepingSession, allowingOnlyWayIn: onlyWayIn, notice: notice, at: self.clock.now())
        {
        case .none: throw ServiceError.notFound("User \(userID) has no email address.")
        case .onlyWayIn:
            throw ServiceError.lastSignInMethod(
                "The email address is this account's only way to sign in: link another one first, or delete the account instead.")
        case .removed(let removed, let sessions):
            if removed.verifiedAt != nil { self.sender?.wake() }
            return (removed, sessions.count)
        }
    }

    /// Support: sets the user's password (prompted by the CLI), ending every session and device credential of the user;
    /// the verified address is told.
    package func setPassword(userID: String, password: String) async throws -> (sessions: Int, devices: Int) {
        guard let account = try await self.store.emailAccount(userID: userID) else {
            throw ServiceError.notFound("User \(userID) has no email account.")
        }
        let normalized = PasswordPolicy.normalize(password)
        try PasswordPolicy.check(normalized, email: try? EmailAddress(parsing: account.email))
        let hash = try await self.pool.hash(normalized)
        guard
            let revoked = try await self.store.setPasswordHash(
                userID: userID, hash: hash, expectedHash: nil, revokingSessionsExcept: nil, keepingDeviceKey: nil,
                notice: try self.notice("Support set a new password for your account.", to: account), reason: "admin", at: self.clock.now())
        else { throw ServiceError.notFound("User \(userID) has no email account.") }
        return (revoked.sessions.count, revoked.devices)
    }

    /// Support: marks the user's address verified (removing other users' unverified registrations of it).
    package func markVerified(userID: String) async throws {
        guard try await self.store.markEmailVerified(userID: userID, at: self.clock.now()) else {
            throw ServiceError.notFound("User \(userID) has no email account (or another user verified its address first).")
        }
    }

    package func account(userID: String) async throws -> EmailAccountRecord? { try await self.store.emailAccount(userID: userID) }

    // MARK: Codes and mails

    static func parse(_ email: String) throws(ServiceError) -> EmailAddress {
        do { return try EmailAddress(parsing: email) } catch { throw .invalidEmail(error.description) }
    }

    /// Whether another mail may go to `address` now (at most one a minute and five an hour); counts it against both when
    /// it may. Each limit takes the mail atomically before it is queued (``RateLimiter/attempting(_:key:refusal:failed:_:)``),
    /// so of concurrent requests for one address at most one a minute gets a mail; a request refused by either limit
    /// counts against neither (the hour's refusal gives the minute's hit back), so refusals never use up the hour.
    private func mayMail(_ address: EmailAddress) async throws -> Bool {
        let (minute, hour) = (self.limits.mailPerMinute, self.limits.mailPerHour)
        do {
            // Every mail counts (`failed` is always true): a hit goes back only when a refusal is thrown through it.
            try await self.limiter.attempting(minute, key: address.key, refusal: { _ in MailHeldBack(limit: minute.name) }, failed: { _ in true }) {
                try await self.limiter.attempting(hour, key: address.key, refusal: { _ in MailHeldBack(limit: hour.name) }, failed: { _ in true }) {}
            }
            return true
        } catch let heldBack as MailHeldBack {
            self.logger.info("mail to an address held back by its limit", metadata: ["limit": "\(heldBack.limit)"])
            return false
        }
    }

    /// ``mayMail(_:)``'s refusal by the policy named `limit`.
    private struct MailHeldBack: Error {
        let limit: String
    }

    private func lookup(token: String?, email: String?, code: String?, purpose: EmailCodePurpose) throws -> EmailCodeLookup {
        if let token, email == nil, code == nil {
            return .link(hash: Secret.hash(token))
        }
        guard token == nil, let email, let code else {
            throw ServiceError.invalidRequest("Send either token (from the mail's link), or email and code (the 6 digits in the mail).")
        }
        let address = try Self.parse(email)
        let digits = code.trimmingCharacters(in: .whitespaces)
        let key = self.codeKey
        return .code(emailKey: address.key) { userID in Self.codeHash(digits, purpose: purpose, userID: userID, key: key) }
    }

    static func codeHash(_ code: String, purpose: EmailCodePurpose, userID: String, key: SymmetricKey) -> String {
        Data(HMAC<SHA256>.authenticationCode(for: Data("\(purpose.rawValue):\(userID):\(code)".utf8), using: key)).hexString
    }

    /// A fresh code of `purpose` for `userID` and its mail, sealed.
    func makeCode(_ purpose: EmailCodePurpose, userID: String, address: EmailAddress, at now: Date) throws -> (NewEmailCode, NewOutboxMail) {
        var generator = SystemRandomNumberGenerator()
        let digits = String(UInt32.random(in: 0..<1_000_000, using: &generator))
        let code = String(repeating: "0", count: 6 - digits.count) + digits
        let linkToken = Secret.generate()
        let lifetime = purpose == .verify ? Self.verificationLifetime : Self.resetLifetime
        let path = purpose == .verify ? EmailAccountRoutes.verifyPagePath : EmailAccountRoutes.resetPagePath
        let mail = try self.makeMail(
            purpose.mail, to: address,
            values: ["code": code, "link": "\(self.linkBase)\(path)?token=\(linkToken)", "minutes": String(Int(lifetime / 60))])
        return (
            NewEmailCode(
                purpose: purpose, codeHash: Self.codeHash(code, purpose: purpose, userID: userID, key: self.codeKey),
                linkHash: Secret.hash(linkToken), expiresAt: now.addingTimeInterval(lifetime)),
            mail
        )
    }

    /// The security notice saying `change` to the account's address, when it is verified (nil otherwise: an unverified
    /// address may be anyone's).
    private func notice(_ change: String, to account: EmailAccountRecord) throws -> NewOutboxMail? {
        guard account.verifiedAt != nil else { return nil }
        return try self.makeMail(.notice, to: EmailAddressOf(account), values: ["change": change])
    }

    /// The mail of `purpose` to `address` with `values` (and the app's name and the address) in its template, sealed.
    private func makeMail(_ purpose: MailPurpose, to address: EmailAddress, values: [String: String] = [:]) throws -> NewOutboxMail {
        let texts = self.templates.render(
            purpose, values: values.merging(["app_name": self.configuration.appName, "email": address.address]) { value, _ in value })
        let fromDomain = self.configuration.from.flatMap { try? EmailAddress(parsing: $0) }.map { String($0.address.split(separator: "@").last!) }
        let messageID = "\(Secret.generate().prefix(24))@\(fromDomain ?? "latchkey.invalid")"
        let sealed = try self.masterKey.seal(
            try JSONEncoder().encode(OutboxMessage(subject: texts.subject, text: texts.text, html: texts.html)),
            context: OutboxSender.sealContext(messageID))
        return NewOutboxMail(recipient: address.address, purpose: purpose, messageID: messageID, sealedMessage: sealed)
    }
}

/// The stored address of `account` as an ``EmailAddress`` (it was normalised when stored).
private func EmailAddressOf(_ account: EmailAccountRecord) throws -> EmailAddress {
    try EmailAccountService.parse(account.email)
}

/// The limits of email and password accounts (under `limits.`): `login-failures.*` (failed sign-ins per account, 10
/// per 900 s: then 429 `too_many_attempts` for that account until the oldest failure is 15 minutes old; never a
/// permanent lock), `password-login.*` (sign-in attempts per client IP, 60 per 300 s), `email.*` (registrations,
/// verifications, resends and resets per client IP, 30 per 3600 s), `mail-per-minute.*` and `mail-per-hour.*` (mails
/// to one address: 1 a minute, 5 an hour; past them a request still answers 202 but no mail goes).
public struct AccountLimits: Sendable, Equatable {
    public var loginFailures = RateLimitPolicy(name: "login-failures", limit: 10, window: 900)
    public var passwordLogin = RateLimitPolicy(name: "password-login", limit: 60, window: 300)
    public var email = RateLimitPolicy(name: "email", limit: 30, window: 3600)
    public var mailPerMinute = RateLimitPolicy(name: "mail-per-minute", limit: 1, window: 60)
    public var mailPerHour = RateLimitPolicy(name: "mail-per-hour", limit: 5, window: 3600)

    public init() {}

    init(reader: ConfigReader) {
        let defaults = Self()
        self.loginFailures = defaults.loginFailures.reading(reader)
        self.passwordLogin = defaults.passwordLogin.reading(reader)
        self.email = defaults.email.reading(reader)
        self.mailPerMinute = defaults.mailPerMinute.reading(reader)
        self.mailPerHour = defaults.mailPerHour.reading(reader)
    }

    var all: [RateLimitPolicy] { [self.loginFailures, self.passwordLogin, self.email, self.mailPerMinute, self.mailPerHour] }
}
