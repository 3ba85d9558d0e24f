/// An assertion that passed every check: what to update on the stored credential.
public struct VerifiedAssertion: Sendable {
    /// The signature counter the authenticator sent: store it for the next assertion.
    public var signCount: UInt32
    /// Whether the authenticator verified the user (the UV flag).
    public var userVerified: Bool
    /// Whether the credential may be backed up or synced (the BE flag).
    public var backupEligible: Bool
    /// Whether the credential is backed up now (the BS flag).
    public var backedUp: Bool
}
