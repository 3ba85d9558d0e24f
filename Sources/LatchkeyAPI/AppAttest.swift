#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What an app sends to prove it is a genuine copy on a real Apple device (App Attest), as `app_attest` in
/// `POST /api/v1/auth/register-device` and `POST /api/v1/auth/guest`.
///
/// Either an attestation — `keyID`, `attestationObject` and the `challenge` exactly as
/// `POST /api/v1/app-attest/challenge` returned it — or, where the server allows debug tokens (simulators, CI), a
/// `debugToken` minted with `latchkey app-attest debug-token create`. Binary values are base64 (standard, base64url or
/// unpadded are all accepted).
public struct AppAttestEvidence: Codable, Sendable, Equatable {
    /// The key ID `DCAppAttestService.generateKey()` returned: the SHA-256 of the key's public key, base64.
    public var keyID: String?
    /// The attestation object `DCAppAttestService.attestKey(_:clientDataHash:)` returned, base64.
    public var attestationObject: String?
    /// The challenge, as the server sent it; the client data hash is SHA-256 of its 32 decoded bytes.
    public var challenge: String?
    /// A debug token in place of an attestation (never logged).
    public var debugToken: String?

    enum CodingKeys: String, CodingKey {
        case keyID = "key_id"
        case attestationObject = "attestation_object"
        case challenge
        case debugToken = "debug_token"
    }

    /// An attestation.
    public init(keyID: String, attestationObject: String, challenge: String) {
        self.keyID = keyID
        self.attestationObject = attestationObject
        self.challenge = challenge
        self.debugToken = nil
    }

    /// A debug token (simulators and CI, where the server allows them).
    public init(debugToken: String) {
        self.keyID = nil
        self.attestationObject = nil
        self.challenge = nil
        self.debugToken = debugToken
    }
}

/// `POST /api/v1/app-attest/challenge`: a single-use challenge (32 random bytes, standard base64) valid for 5 minutes.
public struct AppAttestChallengeResponse: Codable, Sendable, Equatable {
    public var challenge: String
    public init(challenge: String) { self.challenge = challenge }
}

/// The body `POST /api/v1/auth/guest` may carry: an attestation that makes the device in `X-Device-ID` attested.
public struct GuestSessionRequest: Codable, Sendable, Equatable {
    public var appAttest: AppAttestEvidence?
    enum CodingKeys: String, CodingKey { case appAttest = "app_attest" }
    public init(appAttest: AppAttestEvidence? = nil) { self.appAttest = appAttest }
}

extension LatchkeyHeader {
    /// An attested device's assertion (base64 CBOR `{signature, authenticatorData}`) on `POST /api/v1/auth/guest`.
    public static let appAttestAssertion = "X-App-Attest-Assertion"
    /// The fresh challenge the assertion's client data hash covers.
    public static let appAttestChallenge = "X-App-Attest-Challenge"
    /// Set to `true` by forward auth for the token of an attested device.
    public static let attested = "X-Latchkey-Attested"
}

extension ErrorCode {
    /// 400: an `app_attest` attestation (or debug token) failed verification; nothing was stored.
    public static let invalidAttestation = ErrorCode(rawValue: "invalid_attestation")
    /// 400: the App Attest challenge is unknown, already used or expired.
    public static let invalidChallenge = ErrorCode(rawValue: "invalid_challenge")
    /// 401: an attested device's assertion is missing, malformed, signed by another key or replays a counter.
    public static let invalidAssertion = ErrorCode(rawValue: "invalid_assertion")
    /// 403: the server's `app-attest.policy` needs an attested device here.
    public static let attestationRequired = ErrorCode(rawValue: "attestation_required")
}
