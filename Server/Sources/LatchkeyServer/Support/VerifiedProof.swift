import Foundation

/// A DPoP proof (RFC 9449) that passed every check but the one-use check of its `jti`, which the store makes in
/// the transaction the proof is used in. Here, not in DPoP/, because the request context carries it.
package struct VerifiedProof: Sendable, Equatable {
    /// The RFC 7638 thumbprint of the proof's public key (`jkt`).
    package let thumbprint: String
    /// SHA-256 of the proof's `jti`: stored so the proof is accepted once.
    let tokenIDHash: String
    /// Until when the `jti` must be remembered (after that, `iat` alone refuses the proof).
    let expiresAt: Date
    /// The proof carries `ath`, the hash of the access token its request carries (checked): it was made for that token.
    var provesAccessToken = false

    /// The same proof under a `jti` hash of its own for standing in for a recent sign-in, spent apart from the spending of
    /// the sign-in it may also start (linking an Apple ID binds the new session with the proof that showed the recent
    /// sign-in), yet once per proof.
    var asRecentAuthentication: VerifiedProof {
        VerifiedProof(
            thumbprint: self.thumbprint, tokenIDHash: Secret.hash("recent authentication " + self.tokenIDHash), expiresAt: self.expiresAt,
            provesAccessToken: self.provesAccessToken)
    }
}
