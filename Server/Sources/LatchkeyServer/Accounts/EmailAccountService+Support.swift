import Foundation

/// Mails support sends from the console for a user they are helping: not held back by the per-address mail limits (a
/// person on the phone needs the mail now; each sending is audited with the admin who did it).
extension EmailAccountService {
    /// Mails the user a new verification code when their address is not verified yet; returns the address, or nil when
    /// the user has no unverified address.
    package func resendVerification(userID: String) async throws -> String? {
        guard let account = try await self.store.emailAccount(userID: userID), account.verifiedAt == nil else { return nil }
        let now = self.clock.now()
        let (code, mail) = try self.makeCode(.verify, userID: userID, address: try Self.parse(account.email), at: now)
        try await self.store.issueCode(userID: userID, code: code, mail: mail, at: now)
        self.sender?.wake()
        return account.email
    }

    /// Mails the user a password reset code when their address may reset (verified, or the account's only way in);
    /// returns the address, or nil when it may not.
    package func sendPasswordReset(userID: String) async throws -> String? {
        guard let account = try await self.store.emailAccount(userID: userID),
            try await self.store.resettableAccount(key: account.emailKey)?.userID == userID
        else { return nil }
        let now = self.clock.now()
        let (code, mail) = try self.makeCode(.reset, userID: userID, address: try Self.parse(account.email), at: now)
        try await self.store.issueCode(userID: userID, code: code, mail: mail, at: now)
        self.sender?.wake()
        return account.email
    }
}
