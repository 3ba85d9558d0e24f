import Foundation
import LatchkeyAPI

/// The signed-in user's own account: where they are signed in, ending one of those sessions, and the export of
/// everything stored about them.
package struct AccountService: Sendable {
    let sessions: any AccountSessionStore
    let exports: any AccountExportStore
    let budgets: BudgetService
    let clock: any WallClock

    /// The token's user's live sessions, newest first, the token's own marked `current`. A guest is not stored: none.
    package func sessions(for token: VerifiedToken) async throws -> AccountSessionsResponse {
        guard token.kind != .guest else { return AccountSessionsResponse(sessions: []) }
        let sessions = try await self.sessions.liveSessions(ofUser: token.userID, at: self.clock.now())
        return AccountSessionsResponse(
            sessions: sessions.map {
                AccountSession(
                    id: $0.id, deviceID: $0.deviceID, method: $0.method, createdAt: $0.createdAt, lastUsedAt: Self.day($0.lastUsedAt),
                    current: $0.id == token.sessionID)
            })
    }

    /// Ends the session `id` of the token's user, as a logout would (the token's own included);
    /// ``ServiceError/notFound(_:)`` when it is not one of the user's live sessions.
    package func endSession(id: String, for token: VerifiedToken) async throws {
        guard token.kind != .guest, let id = UUID.canonical(id),
            try await self.sessions.endSession(id: id, ofUser: token.userID, at: self.clock.now())
        else { throw ServiceError.notFound("None of your live sessions has this ID.") }
    }

    /// Everything stored about the token's user (the route checks the sign-in is recent).
    package func export(for token: VerifiedToken) async throws -> AccountExport {
        guard let record = try await self.exports.exportRecord(ofUser: token.userID) else { throw TokenRejection.revoked }
        let used = record.usage.filter { $0.at > self.budgets.periodStart }.reduce(0) { $0 + $1.amount }
        return AccountExport(
            user: record.user, identities: record.identities, devices: record.devices, sessions: record.sessions,
            budget: self.budgets.budget(limit: record.budgetLimit, used: used), usage: record.usage, auditEvents: record.auditEvents)
    }

    /// `YYYY-MM-DD`, the UTC day `time` falls on: a session's last use is shown to the day (as devices' `last_seen_at`),
    /// so a copied access token does not tell when the owner refreshed.
    static func day(_ time: Date) -> String {
        time.formatted(Date.ISO8601FormatStyle(timeZone: .gmt).year().month().day().dateSeparator(.dash))
    }
}
