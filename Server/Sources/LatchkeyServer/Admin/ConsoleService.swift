import Foundation
import LatchkeyAPI

/// What the admin console reads and does: the services the API and the CLI use, and the console's own store queries
/// (``AdminQueries``). Every action is written to the audit log with the admin who did it, so ``AdminRoutes`` only reads
/// forms and renders pages.
package struct ConsoleService: Sendable {
    let clock: any WallClock
    let store: SQLLatchkeyStore
    let users: UserService
    let sessions: SessionService
    let budgets: BudgetService
    let accessCodes: AccessCodeService
    let accounts: EmailAccountService
    let secondFactors: SecondFactorService
    let passkeys: PasskeyService
    let keyRing: SigningKeyRing
    let metrics: LatchkeyMetrics
    let audit: AuditLog
    /// Disabling and enabling users, as the backend API and `latchkey users disable|enable` do.
    let backend: BackendService
    /// Woken when support retries mail; nil without SMTP.
    let outboxSender: OutboxSender?
    /// The configured webhook endpoints (their secrets never reach a page).
    let webhookEndpoints: [WebhookEndpoint]
    /// A console account's setup link without its token (``LatchkeyServices/adminSetupLink(token:)``).
    let adminSetupBase: String

    /// What a user's page shows.
    struct UserDetail {
        let user: UserRecord
        let devices: [DeviceRecord]
        let sessions: [AdminSessionRow]
        let identities: [IdentityRecord]
        let budget: UserProfile.Budget
        let codes: [AccessCodeRecord]
        let account: EmailAccountRecord?
        let factors: [MFAFactorsResponse.Factor]
        let passkeys: [PasskeyRecord]
        /// Which of the devices are attested with App Attest.
        let attested: Set<String>
        let disabledAt: Date?
        /// The newest audit events naming the user.
        let events: [AuditEvent]
    }

    // MARK: Reads

    func now() -> Date { self.clock.now() }

    func overview(at now: Date) async throws -> AdminOverview { try await self.store.adminOverview(at: now) }

    /// The 429s answered since the start, by route.
    func refusalsByRoute() -> [(route: String, count: Int)] { self.metrics.refusalsByRoute() }

    func searchUsers(_ query: String, limit: Int, offset: Int) async throws -> [UserRecord] {
        try await self.store.searchUsers(query, limit: limit, offset: offset)
    }

    /// The user `id`; ``AdminPageError/notFound`` when there is none.
    @discardableResult
    func requireUser(_ id: String) async throws -> UserRecord {
        guard let user = try await self.users.user(id: id) else { throw AdminPageError.notFound }
        return user
    }

    func userDetail(_ id: String) async throws -> UserDetail {
        let user = try await self.requireUser(id)
        async let devices = self.users.devices(ofUser: id)
        async let sessions = self.store.adminSessions(ofUser: id, limit: 100)
        async let identities = self.store.identities(ofUser: id)
        async let budget = self.budgets.budget(ofUser: id)
        async let codes = self.accessCodes.list(ofUser: id)
        async let account = self.accounts.account(userID: id)
        async let factors = self.secondFactors.factors(userID: id)
        // From the store: support sees a user's passkeys even while `passkeys.rp-id` is unset.
        async let passkeys = self.store.passkeys(ofUser: id)
        async let disabledAt = self.store.disabledAt(userID: id)
        async let events = self.audit.events(AuditQuery(text: id, limit: 20))
        let deviceRecords = try await devices
        let attested = try await self.store.attestedDevices(among: deviceRecords.map(\.id), userID: id)
        return UserDetail(
            user: user, devices: deviceRecords, sessions: try await sessions, identities: try await identities, budget: try await budget,
            codes: try await codes, account: try await account, factors: try await factors.factors, passkeys: try await passkeys,
            attested: attested, disabledAt: try await disabledAt, events: try await events)
    }

    /// What deleting the user `id` ends: its devices, live sessions, identities and access codes.
    func deletionSummary(_ id: String) async throws -> (devices: Int, liveSessions: Int, identities: Int, codes: Int) {
        try await self.requireUser(id)
        let sessions = try await self.store.adminSessions(ofUser: id, limit: 10_000)
        return (
            try await self.users.devices(ofUser: id).count, sessions.filter { $0.revokedAt == nil }.count,
            try await self.store.identities(ofUser: id).count, try await self.accessCodes.list(ofUser: id).count
        )
    }

    func accessCodeList() async throws -> [AccessCodeRecord] { try await self.accessCodes.list() }

    func signingKeys() async throws -> [SigningKeyRecord] { try await self.keyRing.records() }

    func auditEvents(_ query: AuditQuery) async throws -> [AuditEvent] { try await self.audit.events(query) }

    /// The configured endpoints with the disabled ones' state, and the newest deliveries.
    func webhooks(limit: Int) async throws -> (endpoints: [(WebhookEndpoint, WebhookEndpointState?)], deliveries: [WebhookDelivery]) {
        let disabled = try await self.store.disabledEndpoints()
        let endpoints = self.webhookEndpoints.map { endpoint in (endpoint, disabled.first { $0.name == endpoint.name }) }
        return (endpoints, try await self.store.webhookDeliveries(endpoint: nil, status: nil, limit: limit))
    }

    // MARK: Actions, each audited

    /// Ends the session `sessionID` of `user`; false when it had ended already. ``AdminPageError/notFound`` when it is
    /// not that user's.
    func revokeSession(_ sessionID: String, ofUser user: String, by actor: AuditActor) async throws -> Bool {
        guard try await self.store.userOfSession(sessionID) == user else { throw AdminPageError.notFound }
        let revoked = try await self.sessions.revokeSession(id: sessionID)
        if revoked { try await self.audit.record(actor, AuditAction.sessionRevoke, target: "session \(sessionID)", details: "user \(user)") }
        return revoked
    }

    func revokeSessions(ofUser user: String, by actor: AuditActor) async throws {
        try await self.requireUser(user)
        let count = try await self.sessions.revokeSessions(ofUser: user)
        try await self.audit.record(actor, AuditAction.userSessionsRevoke, target: "user \(user)", details: "\(counted(count, "session")) ended")
    }

    func setBudget(ofUser user: String, to limit: Double, by actor: AuditActor) async throws {
        _ = try await self.budgets.setLimit(ofUser: user, to: limit)
        try await self.audit.record(actor, AuditAction.userBudgetSet, target: "user \(user)", details: "limit \(limit)")
    }

    func issueCode(
        forUser user: String, expiresIn lifetime: TimeInterval?, note: String?, by actor: AuditActor
    ) async throws -> (code: String, record: AccessCodeRecord) {
        let issued = try await self.accessCodes.issue(userID: user, expiresIn: lifetime, note: note)
        try await self.audit.record(
            actor, AuditAction.accessCodeIssue, target: "user \(user)",
            details: "code \(issued.record.id) expires \(issued.record.expiresAt.consoleText)")
        return issued
    }

    func deleteUser(_ user: String, by actor: AuditActor) async throws {
        let (deleted, apple) = try await self.users.delete(userID: user)
        try await self.audit.record(
            actor, AuditAction.userDelete, target: "user \(user)",
            details: "\(counted(deleted.sessionIDs.count, "session")), \(counted(deleted.accessCodeIDs.count, "access code")), "
                + "\(counted(apple, "Apple token")) revoked")
    }

    /// Removes every second factor and recovery code of `user` (a lost authenticator app); their sessions are kept.
    func resetSecondFactors(ofUser user: String, by actor: AuditActor) async throws {
        try await self.requireUser(user)
        let removed = try await self.secondFactors.reset(userID: user)
        try await self.audit.record(actor, AuditAction.userMFAReset, target: "user \(user)", details: "\(counted(removed, "factor")) removed")
    }

    /// Removes the passkey `id` of `user` (a lost or shared device): it signs in no more; sessions are kept.
    /// ``AdminPageError/notFound`` when the user has no such passkey.
    func removePasskey(_ id: String, ofUser user: String, by actor: AuditActor) async throws {
        try await self.requireUser(user)
        do {
            try await self.passkeys.remove(id: id, ofUser: user, by: actor)
        } catch let error as ServiceError where error.kind == .notFound {
            throw AdminPageError.notFound
        }
    }

    func revokeCode(_ code: String, by actor: AuditActor) async throws {
        let (record, sessions) = try await self.accessCodes.revoke(id: code)
        try await self.audit.record(
            actor, AuditAction.accessCodeRevoke, target: "code \(record.id)", details: "user \(record.userID), \(counted(sessions, "session")) ended")
    }

    func rotateKey(by actor: AuditActor) async throws {
        let record = try await self.keyRing.rotate()
        try await self.audit.record(actor, AuditAction.keyRotate, target: "key \(record.kid)")
    }

    /// Records a console sign-in (or the first, with the setup link), sign-out or enrolment.
    func record(_ actor: AuditActor, _ action: String, admin email: String, details: String? = nil) async throws {
        try await self.audit.record(actor, action, target: "admin \(email)", details: details)
    }
}

extension Date {
    /// `2026-11-27 14:05:00 UTC`: how the console's pages and the audit entries of its actions show a time.
    var consoleText: String {
        self.formatted(
            Date.ISO8601FormatStyle(dateSeparator: .dash, dateTimeSeparator: .space, timeZone: .gmt).year().month().day().time(
                includingFractionalSeconds: false)) + " UTC"
    }

    /// `2026-11-27`: a day, in UTC (how long ago a session was used, no closer).
    var consoleDay: String {
        self.formatted(Date.ISO8601FormatStyle(dateSeparator: .dash, timeZone: .gmt).year().month().day())
    }
}
