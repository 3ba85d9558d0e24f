import Foundation
import LatchkeyAPI

/// A new, unconfirmed TOTP factor (``LatchkeySession/enrollTOTP()``): show ``otpauthURI`` as a QR code, or
/// ``secret`` as text to type, then confirm it with a code from the app (``LatchkeySession/confirmTOTP(factorID:code:)``).
///
/// The server shows the secret this once. Its description, debug description and mirror show ``factorID`` only.
public struct TOTPEnrollment: Sendable, Hashable {
    /// The factor's ID, for ``LatchkeySession/confirmTOTP(factorID:code:)``.
    public var factorID: String
    /// The shared secret, RFC 4648 base32 without padding: what an authenticator app takes when typed in.
    public var secret: String
    /// `otpauth://totp/<issuer>:<account>?secret=…&issuer=…`: what a QR code carries. It holds ``secret``.
    public var otpauthURI: URL

    /// Creates an enrolment.
    public init(factorID: String, secret: String, otpauthURI: URL) {
        self.factorID = factorID
        self.secret = secret
        self.otpauthURI = otpauthURI
    }
}

extension TOTPEnrollment: CredentialRedacting {
    /// The factor's ID, never the secret or the URI that carries it.
    public var redactedFields: KeyValuePairs<String, String> { ["factorID": self.factorID] }
}
