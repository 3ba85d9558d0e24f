/// A registration that passed every check: what to store for the new credential.
public struct VerifiedRegistration: Sendable {
    /// The credential ID.
    public var credentialID: [UInt8]
    /// The credential public key as the authenticator sent it, a CBOR-encoded COSE_Key: store it and hand it back to
    /// ``WebAuthn/verifyAssertion(clientDataJSON:authenticatorData:signature:challenge:relyingParty:publicKey:storedSignCount:)``.
    public var publicKey: [UInt8]
    /// The COSE algorithm of the key: -7 (ES256), -8 (EdDSA, Ed25519) or -257 (RS256).
    public var algorithm: Int
    /// The authenticator's signature counter; 0 when it keeps none (synced passkeys).
    public var signCount: UInt32
    /// Whether the authenticator verified the user (the UV flag).
    public var userVerified: Bool
    /// Whether the credential may be backed up or synced (the BE flag).
    public var backupEligible: Bool
    /// Whether the credential is backed up now (the BS flag).
    public var backedUp: Bool
    /// The authenticator's AAGUID, 16 bytes (all zero for most synced passkeys).
    public var aaguid: [UInt8]
    /// The attestation statement format: `none` or `packed`.
    public var attestationFormat: String
}
