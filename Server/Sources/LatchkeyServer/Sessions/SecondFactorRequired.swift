import HTTPTypes
import LatchkeyAPI

/// A sign-in that proved one factor, for a user with a confirmed second factor: answered 403 `mfa_required` with the
/// `mfa_token` that `POST /api/v1/mfa/verify` takes and the user's factors, instead of tokens.
package struct SecondFactorRequired: Error, APIErrorConvertible, CustomStringConvertible {
    /// Single use, five minutes, five wrong codes; never logged (only ``description`` is).
    let mfaToken: String
    let factors: [SecondFactorReference]

    static let message = "This account has a second factor: finish signing in with a code from the authenticator app (POST /api/v1/mfa/verify)."

    package var description: String { "403 mfa_required" }

    package var apiError: APIError {
        var error = APIError(.forbidden, .mfaRequired, Self.message)
        error.body = MFARequiredResponse(
            error: ErrorEnvelope.Detail(code: .mfaRequired, message: Self.message), mfaToken: self.mfaToken,
            factors: self.factors.map { MFARequiredResponse.Factor(id: $0.id, type: $0.type) })
        return error
    }
}

/// The documented body of a sign-in's 403: the error envelope, plus — for `mfa_required` only — the `mfa_token` and the
/// factors (``MFARequiredResponse``); other 403s (`forbidden`, `reauthentication_required`) are the plain envelope.
struct SignInForbiddenBody: Decodable {
    let error: ErrorEnvelope.Detail
    let mfaToken: String?
    let factors: [MFARequiredResponse.Factor]?
    enum CodingKeys: String, CodingKey {
        case error
        case mfaToken = "mfa_token"
        case factors
    }
}

extension APIOperation.Outcome {
    /// A sign-in's 403 `mfa_required` (with `also`, the route's other 403s).
    static func secondFactorRequired(also: String? = nil) -> Self {
        Self(
            403,
            "`mfa_required`: the user has a confirmed second factor; the body also carries `mfa_token` (single use, 5 minutes, 5 wrong "
                + "codes) and `factors`, and `POST /api/v1/mfa/verify` finishes the sign-in." + (also.map { " Or \($0)" } ?? ""),
            body: SignInForbiddenBody.self)
    }
}
