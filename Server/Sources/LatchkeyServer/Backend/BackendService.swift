import Foundation
import LatchkeyAPI

/// The backend API's rules: what the app's own server may read and change about a user, each call audited with the
/// key's name (`backend`, `backend:<name>`). Disabling is also support's (`latchkey users disable`).
package struct BackendService: Sendable {
    let store: SQLLatchkeyStore
    let users: UserService
    let sessions: SessionService
    let audit: AuditLog
    /// `claims.max-bytes`: the most `app_metadata` may take, in compact JSON.
    let maxBytes: Int
    let clock: any WallClock

    /// The user; ``ServiceError/notFound(_:)`` for an unknown or deleted one.
    package func user(id: String, by actor: AuditActor) async throws -> BackendUserResponse {
        let user = try await self.requireUser(id)
        try await self.audit.record(actor, AuditAction.userRead, target: "user \(id)")
        return user
    }

    /// Stores `value` (a JSON object of at most `claims.max-bytes`; `{}` clears it) as the user's `app_metadata`, with its
    /// webhook; their apps hear `claims.changed`. Anything else is ``ServiceError/invalidRequest(_:code:)`` and nothing is stored.
    package func setAppMetadata(_ value: JSONValue, ofUser id: String, by actor: AuditActor) async throws -> BackendUserResponse {
        guard case .object(let object) = value else { throw ServiceError.invalidRequest("Field \"app_metadata\" must be a JSON object.") }
        let compact = JSONValue.compact(object)
        guard compact.count <= self.maxBytes else {
            throw ServiceError.invalidRequest(
                "Field \"app_metadata\" takes \(compact.count) bytes as compact JSON; claims.max-bytes allows \(self.maxBytes).")
        }
        let text = object.isEmpty ? nil : String(decoding: compact, as: UTF8.self)
        guard try await self.store.setAppMetadata(text, ofUser: id, at: self.clock.now()) else { throw Self.unknown(id) }
        try await self.audit.record(
            actor, AuditAction.userAppMetadataSet, target: "user \(id)", details: "\(object.isEmpty ? 0 : compact.count) bytes")
        return try await self.requireUser(id)
    }

    /// Ends every live session of the user (reason `admin`); returns how many.
    package func revokeSessions(ofUser id: String, by actor: AuditActor) async throws -> Int {
        _ = try await self.requireUser(id)
        let count = try await self.sessions.revokeSessions(ofUser: id)
        try await self.audit.record(actor, AuditAction.userSessionsRevoke, target: "user \(id)", details: "\(counted(count, "session")) ended")
        return count
    }

    /// Disables the user (every session ended, every sign-in and refresh refused with `user_disabled`); returns the
    /// sessions ended now (none when the user was disabled already).
    package func disable(userID id: String, by actor: AuditActor) async throws -> [String] {
        switch try await self.store.disableUser(id: id, at: self.clock.now()) {
        case .unknownUser: throw Self.unknown(id)
        case .alreadyDisabled: return []
        case .disabled(let revoked):
            try await self.audit.record(actor, AuditAction.userDisable, target: "user \(id)", details: "\(counted(revoked.count, "session")) ended")
            return revoked
        }
    }

    /// Enables the user again; their ended sessions stay ended. Returns whether they were disabled.
    @discardableResult
    package func enable(userID id: String, by actor: AuditActor) async throws -> Bool {
        switch try await self.store.enableUser(id: id, at: self.clock.now()) {
        case .unknownUser: throw Self.unknown(id)
        case .notDisabled: return false
        case .enabled:
            try await self.audit.record(actor, AuditAction.userEnable, target: "user \(id)")
            return true
        }
    }

    /// Deletes the user as support does (Apple's tokens revoked first, the ID retired).
    package func delete(userID id: String, by actor: AuditActor) async throws {
        let (deleted, apple) = try await self.users.delete(userID: id)
        try await self.audit.record(
            actor, AuditAction.userDelete, target: "user \(id)",
            details: "\(counted(deleted.sessionIDs.count, "session")), \(counted(deleted.accessCodeIDs.count, "access code")), "
                + "\(counted(apple, "Apple token")) revoked")
    }

    /// Tells the user's apps (their event sockets, in every process) `claims.changed`: the SDK refreshes at once.
    package func refreshClaims(ofUser id: String, by actor: AuditActor) async throws {
        guard try await self.store.announceClaimsChanged(ofUser: id) else { throw Self.unknown(id) }
        try await self.audit.record(actor, AuditAction.userClaimsRefresh, target: "user \(id)")
    }

    /// The user as they stand after a change the caller audited already.
    package func current(id: String) async throws -> BackendUserResponse { try await self.requireUser(id) }

    private func requireUser(_ id: String) async throws -> BackendUserResponse {
        guard let record = try await self.store.backendUser(id: id) else { throw Self.unknown(id) }
        return BackendUserResponse(record)
    }

    private static func unknown(_ id: String) -> ServiceError { ServiceError.notFound("No user with ID \(id).") }
}
