import Foundation
import LatchkeyAPI

/// A sign-in that needs a second factor to finish: the server checked the first (a password, Apple, a provider's
/// token) and answered 403 `mfa_required` instead of tokens, because the user has a confirmed factor.
///
/// A sign-in call throws it as ``LatchkeyError/mfaRequired(_:)``; ask the user for a code from their authenticator app
/// (or one of their recovery codes) and pass both to ``LatchkeySession/completeSignIn(_:code:)`` or
/// ``LatchkeySession/completeSignIn(_:recoveryCode:)``. The challenge is single use, lives five minutes and dies after
/// five wrong codes; after that, sign in again.
///
/// Its description, debug description and mirror show the factors only, never ``mfaToken``.
public struct MFAChallenge: Sendable, Hashable {
    /// One of the user's confirmed second factors.
    public struct Factor: Sendable, Hashable {
        /// The factor's ID.
        public var id: String
        /// What kind of factor it is (today always `totp`).
        public var type: FactorType

        /// Creates a factor.
        public init(id: String, type: FactorType) {
            self.id = id
            self.type = type
        }
    }

    /// The token that names this sign-in to `POST /api/v1/mfa/verify`. A credential: keep it in memory (or, for an app
    /// that must, where its tokens are kept), never in a log.
    public let mfaToken: String
    /// The user's confirmed factors, one of which proves the user.
    public let factors: [Factor]

    /// Creates a challenge, as from a server's `mfa_required` answer.
    public init(mfaToken: String, factors: [Factor]) {
        self.mfaToken = mfaToken
        self.factors = factors
    }

    init(_ response: MFARequiredResponse) {
        self.init(mfaToken: response.mfaToken, factors: response.factors.map { Factor(id: $0.id, type: $0.type) })
    }
}

extension MFAChallenge: CredentialRedacting {
    /// The factors, never the token.
    public var redactedFields: KeyValuePairs<String, String> {
        ["factors": "[" + self.factors.map { "\($0.type.rawValue) \($0.id)" }.joined(separator: ", ") + "]"]
    }
}
