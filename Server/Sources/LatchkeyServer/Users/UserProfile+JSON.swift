import LatchkeyAPI

/// `users/me` answers every app launch: its profile writes its own JSON (the bytes `JSONEncoder` writes; tests compare).
extension UserProfile: JSONBodyWritable {
    package func writeMembers(to writer: inout JSONBodyWriter) {
        if let budget = self.budget { writer.member("budget", budget) }
        writer.member("created_at", self.createdAt)
        writer.member("devices", self.devices)
        if let email = self.email { writer.member("email", email) }
        if let emailVerified = self.emailVerified { writer.member("email_verified", emailVerified) }
        writer.member("identities", self.identities)
        writer.member("kind", self.kind.rawValue)
        if let provider = self.provider { writer.member("provider", provider) }
        if let providerSubject = self.providerSubject { writer.member("provider_subject", providerSubject) }
        if let sessionID = self.sessionID { writer.member("session_id", sessionID) }
        writer.member("token_kind", self.tokenKind.rawValue)
        writer.member("user_id", self.userID)
    }
}

extension UserProfile.Budget: JSONBodyWritable {
    package func writeMembers(to writer: inout JSONBodyWriter) {
        writer.member("limit", self.limit)
        writer.member("period", self.period)
        writer.member("remaining", self.remaining)
        writer.member("used", self.used)
    }
}

extension UserProfile.Device: JSONBodyWritable {
    package func writeMembers(to writer: inout JSONBodyWriter) {
        writer.member("attested", self.attested)
        writer.member("created_at", self.createdAt)
        writer.member("device_id", self.deviceID)
        if let lastSeenAt = self.lastSeenAt { writer.member("last_seen_at", lastSeenAt) }
    }
}

extension UserProfile.Identity: JSONBodyWritable {
    package func writeMembers(to writer: inout JSONBodyWriter) {
        writer.member("created_at", self.createdAt)
        if let email = self.email { writer.member("email", email) }
        writer.member("provider", self.provider)
        writer.member("subject", self.subject)
    }
}
