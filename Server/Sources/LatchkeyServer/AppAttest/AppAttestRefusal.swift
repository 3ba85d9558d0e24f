import HTTPTypes
import LatchkeyAPI

/// Why an `app_attest`, an assertion or a challenge request was refused; nothing was stored. Messages name the step that
/// failed, never key material or a debug token.
package struct AppAttestRefusal: APIErrorConvertible, Equatable, CustomStringConvertible {
    enum Kind: Equatable {
        /// 400 `invalid_request`: a value is missing or not base64.
        case malformed
        /// 400 `invalid_attestation`.
        case attestation
        /// 400 `invalid_challenge`: unknown, used or expired.
        case challenge
        /// 401 `invalid_assertion`.
        case assertion
        /// 403 `attestation_required`.
        case required
        /// 404: App Attest is off.
        case disabled
    }

    let kind: Kind
    let message: String

    static func malformed(_ message: String) -> Self { Self(kind: .malformed, message: message) }
    static func attestation(_ message: String) -> Self { Self(kind: .attestation, message: message) }
    static func assertion(_ message: String) -> Self { Self(kind: .assertion, message: message) }
    static func required(_ message: String) -> Self { Self(kind: .required, message: message) }
    static let challenge = Self(
        kind: .challenge, message: "The App Attest challenge is unknown, used or expired: get a new one from POST /api/v1/app-attest/challenge.")
    static let disabled = Self(kind: .disabled, message: "App Attest is off on this server: set app-attest.policy and app-attest.app-ids.")

    package var description: String { self.message }

    package var apiError: APIError {
        switch self.kind {
        case .malformed: APIError(.badRequest, .invalidRequest, self.message)
        case .attestation: APIError(.badRequest, .invalidAttestation, self.message)
        case .challenge: APIError(.badRequest, .invalidChallenge, self.message)
        case .assertion: APIError(.unauthorized, .invalidAssertion, self.message)
        case .required: APIError(.forbidden, .attestationRequired, self.message)
        case .disabled: APIError(.notFound, .notFound, self.message)
        }
    }
}

extension AppAttestKeyInUse: APIErrorConvertible {
    package var apiError: APIError {
        AppAttestRefusal.attestation("This App Attest key is attested for another device ID; nothing was stored.").apiError
    }
}
