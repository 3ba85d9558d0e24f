/// Why a DPoP proof was refused. The message is safe to show: it never quotes the proof.
@available(LatchkeyServer 1.0, *)
public enum DPoPRejection: Error, Equatable, CustomStringConvertible {
    /// The `DPoP` header was sent more than once.
    case duplicated
    /// Not a compact JWS with the JSON header and claims RFC 9449 asks for.
    case malformed
    /// `typ` is not `dpop+jwt`, or `alg` not ES256, or the `jwk` not a public P-256 key.
    case unsupportedKey
    case badSignature
    /// `htm` or `htu` do not name this request.
    case wrongRequest
    /// `iat` is more than a day from the server's clock.
    case outsideTimeWindow
    /// No nonce, or one this server did not hand out recently: ask again with the nonce in `DPoP-Nonce`.
    case nonceRequired
    /// The proof's `jti` was used before.
    case replayed
    /// This server requires proofs (`dpop.mode` `required`) and none came.
    case required

    public var description: String {
        switch self {
        case .duplicated: "Send one DPoP header, not several."
        case .malformed: "The DPoP proof is not a well-formed JWT."
        case .unsupportedKey: "The DPoP proof must be typ dpop+jwt, signed with ES256 by the public P-256 key in its jwk header."
        case .badSignature: "The DPoP proof's signature does not verify."
        case .wrongRequest: "The DPoP proof names another method or URL (htm, htu)."
        case .outsideTimeWindow: "The DPoP proof's iat is more than a day from the server's clock: check the device's clock."
        case .nonceRequired: "Send a DPoP proof carrying the nonce in the DPoP-Nonce header."
        case .replayed: "The DPoP proof has been used before; make a new one for every request."
        case .required: "This server requires a DPoP proof (RFC 9449) with every sign-in and refresh."
        }
    }
}
