import Foundation
import LatchkeyAPI

/// A user row.
package struct UserRecord: Sendable, Equatable {
    package var id: String
    package var kind: UserKind
    package var createdAt: Date
}

/// A device row; the secret only as its hash.
package struct DeviceRecord: Sendable, Equatable {
    package var id: String
    package var userID: String
    package var secretHash: String
    package var createdAt: Date
    package var lastSeenAt: Date?
    /// The RFC 7638 thumbprint of the device's DPoP key, when it registered with one: it then proves itself with
    /// that key, never with a secret.
    package var keyThumbprint: String?
}

/// A linked identity from an identity provider.
package struct IdentityRecord: Sendable, Equatable {
    package var provider: String
    package var subject: String
    package var userID: String
    package var createdAt: Date
    /// The address the provider gave with the identity (Apple and Google: only a verified one).
    package var email: String? = nil
}

/// A session: the family of refresh tokens that one sign-in started.
package struct SessionRecord: Sendable, Equatable {
    package var id: String
    package var userID: String
    package var deviceID: String?
    /// When the session began: its user authenticated then (`auth_time`); refreshes keep it.
    package var createdAt: Date
    package var revokedAt: Date?
    /// The thumbprint of the key its refreshes must be signed with (DPoP), when it is bound to one.
    package var dpopThumbprint: String?
    /// The access code it was exchanged from: such a session never shows a recent sign-in.
    package var accessCodeID: String? = nil
    /// How its user proved who they are (the `amr` claim), second factors included.
    package var amr: [AuthenticationMethod] = []
    /// When it last proved a second factor (at sign-in or by a step-up); nil: `aal1`.
    package var aal2At: Date? = nil

    /// `aal2` once the session proved a second factor, else `aal1`.
    package var aal: AuthenticatorAssuranceLevel { self.aal2At == nil ? .aal1 : .aal2 }
}

/// An access code's bookkeeping row; the code itself is a JWT whose `jti` is `id`.
package struct AccessCodeRecord: Sendable, Equatable {
    package var id: String
    package var userID: String
    package var note: String?
    package var createdAt: Date
    package var expiresAt: Date
    package var revokedAt: Date?

    /// `revoked`, `expired` or `active` at `time`.
    package func status(at time: Date) -> String {
        self.revokedAt != nil ? "revoked" : self.expiresAt <= time ? "expired" : "active"
    }
}

/// A signing key: the public key in PEM, the private key sealed with the master key.
package struct SigningKeyRecord: Sendable, Equatable {
    package var kid: String
    package var algorithm: String
    package var publicKeyPEM: String
    package var sealedPrivateKey: String
    package var createdAt: Date
    /// When it stops signing (a later key takes over then): in the future while a rotation waits for its key's time.
    package var retiredAt: Date?
    /// A revoked key verifies nothing and is not published (an emergency: the key leaked).
    package var revokedAt: Date?
    /// When it starts signing; nil: from ``createdAt``. Published from ``createdAt`` on.
    package var signsFrom: Date? = nil

    /// When the key starts signing.
    package var activeFrom: Date { self.signsFrom ?? self.createdAt }

    /// The key's state at `now`: `revoked <time>`, `published, signs from <time>`, `signing until <time>` (a rotation
    /// waits for its key's time), `retired <time>` or `active`.
    package func status(at now: Date) -> String {
        if let revoked = self.revokedAt { return "revoked \(revoked.formatted(.iso8601))" }
        if let from = self.signsFrom, from > now { return "published, signs from \(from.formatted(.iso8601))" }
        if let retired = self.retiredAt {
            return retired > now ? "signing until \(retired.formatted(.iso8601))" : "retired \(retired.formatted(.iso8601))"
        }
        return "active"
    }

    /// Whether the key signs at `time`. A key with no `signsFrom` signs from its creation whatever the clock of the
    /// process that reads it says (processes' clocks differ a little).
    package func signs(at time: Date) -> Bool {
        self.revokedAt == nil && (self.signsFrom.map { $0 <= time } ?? true) && (self.retiredAt.map { $0 > time } ?? true)
    }
}

/// Everything one account deletion removed, so caches can forget it.
package struct DeletedUser: Sendable, Equatable {
    package var userID: String
    package var sessionIDs: [String]
    package var accessCodeIDs: [String]
}

/// A user with everything their profile shows, as one read returns it.
package struct UserProfileRecord: Sendable, Equatable {
    package var user: UserRecord
    /// Oldest first.
    package var devices: [DeviceRecord]
    /// Oldest first.
    package var identities: [IdentityRecord]
    /// The limit support set, or `nil` for the default.
    package var budgetLimit: Double?
    /// Usage recorded in the budget's period.
    package var usedBudget: Double
    /// The user's email address, and whether it was verified.
    package var email: String? = nil
    package var emailVerified = false
}
