import Foundation
import LatchkeyAPI

extension LatchkeySession {
    /// Starts adding a TOTP factor to the signed-in user (`POST /api/v1/mfa/totp`): the server makes a secret and
    /// answers with it once. Show ``TOTPEnrollment/otpauthURI`` as a QR code (and ``TOTPEnrollment/secret`` as text),
    /// then ask for the code the authenticator app shows and pass it to ``confirmTOTP(factorID:code:)``. Until then the
    /// factor does nothing; enrolling again replaces an unconfirmed one.
    ///
    /// Adding a factor needs a recent sign-in (the request carries a proof of the device key, which gives it when the
    /// session was started with that key) and, for a user who has a factor already, a recent step-up.
    ///
    /// - Throws: ``LatchkeyError/rejected(_:)`` `factor_exists` (409) when the user has a confirmed TOTP factor (remove it
    ///   first), `reauthentication_required`, `aal2_required` (see ``stepUp(code:)``), ``LatchkeyError/notSignedIn``, and
    ///   the errors of ``send(_:)``.
    public func enrollTOTP() async throws -> TOTPEnrollment {
        var request = LatchkeyRequest(method: "POST", path: "/api/v1/mfa/totp", auth: .bearer)
        request.provesDevice = true
        let enrolled = try await self.send(request, decoding: TOTPEnrollmentResponse.self)
        guard let uri = URL(string: enrolled.otpauthURI) else { throw LatchkeyError.invalidResponse }
        return TOTPEnrollment(factorID: enrolled.factorID, secret: enrolled.secret, otpauthURI: uri)
    }

    /// Confirms the factor ``enrollTOTP()`` started with a code from the authenticator app
    /// (`POST /api/v1/mfa/totp/{factor_id}/confirm`): from now on every sign-in of the user needs a second factor.
    ///
    /// Returns the user's ten recovery codes (`XXXXX-XXXXX`, each usable once). The server shows them this once: show
    /// them to the user to write down, and never log or store them.
    ///
    /// The confirming session becomes `aal2` on the server, and its tokens say so from
    /// their next refresh: the SDK refreshes at once, so ``AuthState`` and the next requests carry `aal2`. A failed
    /// refresh (offline, say) does not fail the confirmation; the codes are returned and the next refresh catches up.
    ///
    /// - Throws: ``LatchkeyError/rejected(_:)`` `invalid_code` (400) when the code is wrong (check the device's clock),
    ///   ``LatchkeyError/rejected(_:)`` `not_found` for an unknown factor, ``LatchkeyError/rateLimited(_:)`` after too
    ///   many wrong codes, and the errors of ``send(_:)``. No error text contains the code.
    public func confirmTOTP(factorID: String, code: String) async throws -> [String] {
        let code = code.trimmingCharacters(in: .whitespacesAndNewlines)
        let path = "/api/v1/mfa/totp/\(try LatchkeyRequest.pathSegment(factorID, naming: "factor"))/confirm"
        var request = try LatchkeyRequest.post(path, json: MFACodeRequest(code: code), auth: .bearer)
        request.provesDevice = true
        let codes = try await self.send(request, decoding: RecoveryCodesResponse.self, hiding: [code]).recoveryCodes
        _ = try? await self.refresh()
        return codes
    }

    /// The signed-in user's second factors, confirmed or not (`GET /api/v1/mfa/factors`); never their secrets.
    ///
    /// - Throws: ``LatchkeyError/notSignedIn`` and the errors of ``send(_:)``.
    public func mfaFactors() async throws -> [MFAFactorsResponse.Factor] {
        try await self.send(.get("/api/v1/mfa/factors", auth: .bearer), decoding: MFAFactorsResponse.self).factors
    }

    /// Removes one of the signed-in user's factors (`DELETE /api/v1/mfa/factors/{id}`). Without a confirmed factor the
    /// user's sign-ins need one factor again, and the recovery codes no longer matter.
    ///
    /// - Throws: ``LatchkeyError/rejected(_:)`` `aal2_required` until the session has stepped up recently (see
    ///   ``stepUp(code:)``), `not_found` for an unknown factor, ``LatchkeyError/invalidRequest(_:)`` without sending
    ///   anything for an ID that cannot be a path segment, and the errors of ``send(_:)``.
    public func removeFactor(id: String) async throws {
        let path = "/api/v1/mfa/factors/\(try LatchkeyRequest.pathSegment(id, naming: "factor"))"
        var request = LatchkeyRequest(method: "DELETE", path: path, auth: .bearer)
        request.provesDevice = true
        _ = try await self.send(request)
    }

    /// Issues the signed-in user a new set of ten recovery codes (`POST /api/v1/mfa/recovery-codes`); the old ones stop
    /// working. Shown this once, like those of ``confirmTOTP(factorID:code:)``: never log or store them.
    ///
    /// - Throws: ``LatchkeyError/rejected(_:)`` `aal2_required` until the session has stepped up recently (see
    ///   ``stepUp(code:)``), and the errors of ``send(_:)``.
    public func regenerateRecoveryCodes() async throws -> [String] {
        var request = LatchkeyRequest(method: "POST", path: "/api/v1/mfa/recovery-codes", auth: .bearer)
        request.provesDevice = true
        return try await self.send(request, decoding: RecoveryCodesResponse.self).recoveryCodes
    }
}
