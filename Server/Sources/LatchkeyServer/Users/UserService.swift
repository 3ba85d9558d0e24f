import Foundation
import LatchkeyAPI

/// Users: registration by device UUID, profiles, and the support commands.
public struct UserService: Sendable {
    let store: any UserStore
    let budgets: BudgetService
    /// Revokes what identity providers granted for the user (Apple's refresh tokens) before the account goes.
    let grants: any LinkedGrantRevoker
    let clock: any WallClock
    /// While App Attest is on: which of the user's devices are attested (`devices[].attested`).
    var attestations: (any AppAttestStore)? = nil

    /// Creates the device user `userID` unless it exists; returns whether it was created. A deleted user's ID is
    /// refused (``ServiceError/userDeleted``) until support frees it.
    package func register(userID: String) async throws -> Bool {
        if try await self.store.registerUser(id: userID, kind: .device, at: self.clock.now()) { return true }
        if try await self.store.deletedAt(userID: userID) != nil { throw ServiceError.userDeleted }
        return false
    }

    /// Support: lets the deleted user's ID `userID` be registered again.
    package func freeDeletedID(_ userID: String) async throws {
        guard try await self.store.freeDeletedID(userID) else { throw ServiceError.notFound("No deleted user with ID \(userID).") }
    }

    /// The profile of the token's user.
    public func profile(for token: VerifiedToken) async throws -> UserProfile {
        if token.kind == .guest {
            // A guest is not stored: the profile is what the token says.
            return UserProfile(
                userID: token.userID, kind: .guest, createdAt: Date(timeIntervalSince1970: TimeInterval(token.claims.issuedAt)),
                tokenKind: .guest, sessionID: nil, identities: [], devices: [])
        }
        // The account was deleted (perhaps by another process): its tokens are no longer credentials.
        // One statement (one round trip) for the user, devices, identities and budget.
        guard let stored = try await self.store.profile(ofUser: token.userID, usageSince: self.budgets.periodStart) else {
            throw TokenRejection.revoked
        }
        let attested = try await self.attestations?.attestedDevices(among: stored.devices.map(\.id), userID: stored.user.id) ?? []
        return UserProfile(
            userID: stored.user.id, kind: stored.user.kind, createdAt: stored.user.createdAt, tokenKind: token.kind, sessionID: token.sessionID,
            identities: stored.identities.map {
                UserProfile.Identity(provider: $0.provider, subject: $0.subject, createdAt: $0.createdAt, email: $0.email)
            },
            devices: stored.devices.map {
                UserProfile.Device(
                    deviceID: $0.id, createdAt: $0.createdAt, lastSeenAt: $0.lastSeenAt.map(Self.day), attested: attested.contains($0.id))
            },
            budget: self.budgets.budget(limit: stored.budgetLimit, used: stored.usedBudget), provider: token.provider,
            providerSubject: token.providerSubject, email: stored.email, emailVerified: stored.email.map { _ in stored.emailVerified })
    }

    /// The UTC day `time` falls on: `last_seen_at` is shown to the day, so someone reading `users/me` with a copied access
    /// token cannot tell when the owner refreshed (the moment to present a copied refresh token within the grace window).
    static func day(_ time: Date) -> Date { Date(timeIntervalSince1970: (time.timeIntervalSince1970 / 86_400).rounded(.down) * 86_400) }

    package func user(id: String) async throws -> UserRecord? { try await self.store.user(id: id) }
    package func devices(ofUser id: String) async throws -> [DeviceRecord] { try await self.store.devices(ofUser: id) }
    package func users(limit: Int, offset: Int) async throws -> [UserRecord] { try await self.store.users(limit: limit, offset: offset) }

    /// Deletes the account; its sessions and codes stop working at once on this server, and its ID is retired.
    ///
    /// Apple refresh tokens stored for the user are revoked at Apple first (App Store guideline 5.1.1(v));
    /// when Apple does not confirm, nothing is deleted (``ServiceError/upstream(_:)``).
    package func delete(userID: String) async throws -> (deleted: DeletedUser, appleTokensRevoked: Int) {
        guard try await self.store.user(id: userID) != nil else { throw ServiceError.notFound("No user with ID \(userID).") }
        let revoked = try await self.grants.revokeGrants(ofUser: userID)
        guard let deleted = try await self.store.deleteUser(id: userID, at: self.clock.now()) else {
            throw ServiceError.notFound("No user with ID \(userID).")
        }
        return (deleted, revoked)
    }
}

/// What an identity provider granted for a user and must be revoked before the account is deleted (App Store guideline
/// 5.1.1(v): Sign in with Apple's refresh tokens). Federation provides it.
package protocol LinkedGrantRevoker: Sendable {
    /// Revokes the user's grants; returns how many. Throws ``ServiceError/upstream(_:)`` when the provider does not
    /// confirm one: the account must then stay.
    func revokeGrants(ofUser userID: String) async throws -> Int
}
