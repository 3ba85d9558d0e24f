/// The relying party a ceremony must be for: its ID, the origins its pages are served from and whether it requires
/// user verification.
public struct RelyingParty: Sendable {
    /// The RP ID, a registrable domain such as `example.com` (or `localhost`); authenticator data carries its SHA-256.
    public var id: String
    /// The allowed `origin` values of client data, compared as exact strings (`https://example.com`).
    public var origins: Set<String>
    /// Whether the authenticator must have verified the user (the UV flag), not only seen them present.
    public var userVerificationRequired: Bool

    /// A relying party of `id`, served from `origins`.
    public init(id: String, origins: Set<String>, userVerificationRequired: Bool) {
        self.id = id
        self.origins = origins
        self.userVerificationRequired = userVerificationRequired
    }
}
