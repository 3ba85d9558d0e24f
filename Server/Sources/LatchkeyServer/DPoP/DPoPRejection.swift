import HTTPTypes
import LatchkeyAPI

/// Why a DPoP proof was refused. The message is safe to show: it never quotes the proof.
///
/// A struct, not an enum, so reasons can be added without breaking code that switches over them (as jwt-kit's and
/// postgres-nio's errors do): compare with `==`, or match in `catch` and `case` patterns (`catch DPoPRejection.duplicated`).
public struct DPoPRejection: Error, Hashable, Sendable, CustomStringConvertible {
    private enum Base: String, Hashable, Sendable {
        case duplicated, malformed, unsupportedKey, badSignature, wrongRequest, outsideTimeWindow, nonceRequired, replayed, required,
            wrongAccessToken
    }

    private let base: Base

    /// The `DPoP` header was sent more than once.
    public static let duplicated = DPoPRejection(base: .duplicated)
    /// Not a compact JWS with the JSON header and claims RFC 9449 asks for.
    public static let malformed = DPoPRejection(base: .malformed)
    /// `typ` is not `dpop+jwt`, or `alg` not ES256, or the `jwk` not a public P-256 key.
    public static let unsupportedKey = DPoPRejection(base: .unsupportedKey)
    public static let badSignature = DPoPRejection(base: .badSignature)
    /// `htm` or `htu` do not name this request.
    public static let wrongRequest = DPoPRejection(base: .wrongRequest)
    /// `iat` is more than a day from the server's clock.
    public static let outsideTimeWindow = DPoPRejection(base: .outsideTimeWindow)
    /// No nonce, or one this server did not hand out recently: ask again with the nonce in `DPoP-Nonce`.
    public static let nonceRequired = DPoPRejection(base: .nonceRequired)
    /// The proof's `jti` was used before.
    public static let replayed = DPoPRejection(base: .replayed)
    /// This server requires proofs (`dpop.mode` `required`) and none came.
    public static let required = DPoPRejection(base: .required)
    /// `ath` is not the hash of the access token the request carries (or it carries none).
    public static let wrongAccessToken = DPoPRejection(base: .wrongAccessToken)

    /// A stable name of the reason, for logs.
    public var reason: String { self.base.rawValue }

    public var description: String {
        switch self.base {
        case .duplicated: "Send one DPoP header, not several."
        case .malformed: "The DPoP proof is not a well-formed JWT."
        case .unsupportedKey: "The DPoP proof must be typ dpop+jwt, signed with ES256 by the public P-256 key in its jwk header."
        case .badSignature: "The DPoP proof's signature does not verify."
        case .wrongRequest: "The DPoP proof names another method or URL (htm, htu)."
        case .outsideTimeWindow: "The DPoP proof's iat is more than a day from the server's clock: check the device's clock."
        case .nonceRequired: "Send a DPoP proof carrying the nonce in the DPoP-Nonce header."
        case .replayed: "The DPoP proof has been used before; make a new one for every request."
        case .required: "This server requires a DPoP proof (RFC 9449) with every sign-in and refresh."
        case .wrongAccessToken: "The DPoP proof's ath is not the hash of the access token this request carries."
        }
    }

    /// Matches an error that is this reason, so `catch DPoPRejection.duplicated` works.
    public static func ~= (pattern: DPoPRejection, error: any Error) -> Bool { (error as? DPoPRejection) == pattern }
}

extension DPoPRejection: APIErrorConvertible {
    package var apiError: APIError { APIError(.badRequest, self == .nonceRequired ? .useDPoPNonce : .invalidDPoPProof, self.description) }
}
