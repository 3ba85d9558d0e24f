import Foundation
import Hummingbird
import LatchkeyAPI

/// Second factors: `POST /api/v1/mfa/totp` (enrol), `POST /api/v1/mfa/totp/{factor_id}/confirm`, `POST /api/v1/mfa/verify`
/// (finish a sign-in, or step up), `GET /api/v1/mfa/factors`, `DELETE /api/v1/mfa/factors/{factor_id}` and
/// `POST /api/v1/mfa/recovery-codes`.
struct SecondFactorRoutes {
    let secondFactors: SecondFactorService
    let verifier: AccessTokenVerifier
    let dpop: DPoPVerifier
    let limiter: RateLimiter
    let policy: SecondFactorPolicy
    let trustedProxies: Set<String>

    private func session(_ refusal: String) -> RouteRequirement<LatchkeyRequestContext> {
        .token(self.verifier, kinds: [.session], refusal: refusal)
    }

    func add(to api: APIRoutes<LatchkeyRequestContext>) {
        api.add(Self.enroll, requirements: [.proof(self.dpop), self.session("Only a signed-in user's own session can set up a second factor.")]) {
            _, context in
            Answer.tokens(try await self.secondFactors.enroll(token: try context.requireIdentity(), proof: context.proof), status: .created)
        }
        api.add(Self.confirm, requirements: [self.session("Only the account's own session can confirm its factor.")]) { request, context in
            let body = try await request.decode(as: MFACodeRequest.self, context: context)
            let codes = try await self.secondFactors.confirm(
                factorID: try context.parameters.require("factor_id"), code: body.code, token: try context.requireIdentity())
            return Answer.tokens(RecoveryCodesResponse(recoveryCodes: codes))
        }
        var verifyRequirements: [RouteRequirement<LatchkeyRequestContext>] = [
            .proof(self.dpop), .issuesSessionTokens,
            .token(
                self.verifier, kinds: [.session], optional: true,
                refusal: "Only a session's access token can step up; send no Bearer when finishing a sign-in with mfa_token."),
        ]
        if self.policy.verify.isEnabled {
            verifyRequirements.insert(
                .limited(by: self.policy.verify, limiter: self.limiter, trustedProxies: self.trustedProxies, counting: "verifications"), at: 0)
        }
        api.add(Self.verify, requirements: verifyRequirements) { request, context in
            let body = try await request.decode(as: MFAVerifyRequest.self, context: context)
            return Answer.tokens(try await self.secondFactors.verify(body, bearer: context.identity, proof: context.proof))
        }
        api.add(Self.factors, requirements: [self.session("Only the account's own session can list its factors.")]) { _, context in
            Answer(try await self.secondFactors.factors(userID: try context.requireIdentity().userID))
        }
        api.add(Self.deleteFactor, requirements: [self.session("Only the account's own session can remove its factors.")]) { _, context in
            try await self.secondFactors.deleteFactor(id: try context.parameters.require("factor_id"), token: try context.requireIdentity())
            return Response(status: .noContent)
        }
        api.add(Self.recoveryCodes, requirements: [self.session("Only the account's own session can replace its recovery codes.")]) {
            _, context in
            let codes = try await self.secondFactors.regenerateRecoveryCodes(token: try context.requireIdentity())
            return Answer.tokens(RecoveryCodesResponse(recoveryCodes: codes))
        }
    }
}

extension SecondFactorRoutes {
    static let enroll = APIOperation(
        .post, "/api/v1/mfa/totp", id: "enrollTOTP", tag: "Second factors", summary: "Start setting up an authenticator app (TOTP)",
        description: """
            A new, unconfirmed TOTP factor (RFC 6238: SHA-1, 6 digits, 30-second steps) for the session's user: its `secret` (RFC 4648 \
            base32, 160 random bits behind it) and `otpauth_uri` (for a QR code), shown this once — the server keeps the secret only \
            sealed with the master key. It does nothing until confirmed with a code from the app; a second enrolment replaces an \
            unconfirmed factor. Needs a recent sign-in (a session begun within `tokens.recent-authentication` seconds, or a DPoP proof \
            made with the session's key for this access token); a user who has a confirmed factor already gets 403 `aal2_required` \
            until the session stepped up, then 409 `factor_exists` (one confirmed TOTP factor per user: remove it first). The URI names \
            the issuer (`mfa.issuer`, default `email.app-name`) and the account (the email address, else the user ID).
            """,
        outcomes: [
            .init(201, "The unconfirmed factor and its secret, shown once.", body: TOTPEnrollmentResponse.self, headers: ["Cache-Control"]),
            .forbidden(
                "Not a user's session (`forbidden`), no recent sign-in (`reauthentication_required`), or a factor exists and the session "
                    + "has not stepped up (`aal2_required`)."),
            .conflict("The user has a confirmed TOTP factor already (`factor_exists`)."), .unavailable,
        ])

    static let confirm = APIOperation(
        .post, "/api/v1/mfa/totp/{factor_id}/confirm", id: "confirmTOTP", tag: "Second factors", summary: "Confirm the authenticator app",
        description: """
            `{code}` from the authenticator app confirms the session's user's unconfirmed factor: from then on every sign-in that proves \
            one factor (password, Apple, a provider's token) answers 403 `mfa_required`. Answers ten recovery codes (`XXXXX-XXXXX`, \
            single use, stored only hashed; any earlier set is void), shown this once. No tokens: the confirming session is `aal2` from \
            now, and its next refresh's access token says so (`aal`, `amr` with `otp`). A wrong code is 400 `invalid_code` and counts \
            toward `limits.mfa-failures` (10 per user in 15 minutes; then 429 with `Retry-After`).
            """,
        parameters: [.init("factor_id", in: .path, required: true, "The `factor_id` of the enrolment.")],
        requestBody: MFACodeRequest.self, requestExample: #"{"code": "123456"}"#,
        outcomes: [
            .init(200, "Confirmed; the recovery codes, shown once.", body: RecoveryCodesResponse.self, headers: ["Cache-Control"]),
            .badRequest("Malformed body, or `invalid_code`."), .forbidden("Not a user's session (`forbidden`)."),
            .notFound("No unconfirmed factor with this ID for this user."),
            .init(429, "`too_many_attempts`: too many wrong codes for this user.", headers: ["Retry-After"]), .tooLarge, .unavailable,
        ])

    static let verify = APIOperation(
        .post, "/api/v1/mfa/verify", id: "verifySecondFactor", tag: "Second factors", summary: "Finish a sign-in, or step up, with a second factor",
        description: """
            With `mfa_token` (from a sign-in's 403 `mfa_required`) and `code` or `recovery_code`: finishes that sign-in — a new session \
            whose access token carries `aal: "aal2"` and `amr` naming both factors (`["pwd", "otp"]`, `["apple", "otp"]`, \
            `["pwd", "recovery"]`); a DPoP proof binds it, and a sign-in that began with a proof needs one made with the same key. The \
            `mfa_token` is single use, lives 5 minutes and dies after 5 wrong codes (then 401 `invalid_mfa_token`). Without `mfa_token`, \
            with a session's Bearer: a step-up — a new token pair for the same session at `aal2` (its earlier refresh tokens are spent), \
            which lets it do sensitive actions for `mfa.step-up-lifetime` seconds (600).

            A TOTP code is accepted once: a code of a time step already used (or an older one) is refused like a wrong code, with the same \
            400 `invalid_code`; codes one step either side of now are accepted. Recovery codes are accepted in any case, with or without \
            the dash, each once; using one is audited and mails the user's verified address. Wrong codes count per `mfa_token` (5) and \
            per user (`limits.mfa-failures`: 10 in 15 minutes, then every verify for that user — the right code included — is 429 \
            `too_many_attempts` with `Retry-After`). `limits.mfa-verify` adds a per-client-IP limit (0, off, by default).
            """,
        requestBody: MFAVerifyRequest.self, requestExample: #"{"mfa_token": "q1Zk8t3S0Yd2pGQeYQ9b0m3fX5v7Wc1uJ2nR4hT6kLA", "code": "123456"}"#,
        outcomes: [
            .init(200, "The token pair, `aal2`.", body: TokenPairResponse.self, headers: ["Cache-Control"]),
            .badRequest("Malformed body, neither or both of `code` and `recovery_code`, no `mfa_token` and no Bearer, or `invalid_code`."),
            .init(401, "`invalid_mfa_token`, or the Bearer is not valid (`invalid_token`).", headers: ["WWW-Authenticate"]),
            .forbidden("The Bearer is not a session's (`forbidden`)."),
            .init(429, "`too_many_attempts` for this user, or `rate_limited` for this client.", headers: ["Retry-After"]), .tooLarge,
            .unavailable,
        ])

    static let factors = APIOperation(
        .get, "/api/v1/mfa/factors", id: "listSecondFactors", tag: "Second factors", summary: "The account's second factors",
        description: "The session's user's factors, confirmed or not, oldest first; never a secret.",
        outcomes: [.init(200, "The factors.", body: MFAFactorsResponse.self), .forbidden("Not a user's session (`forbidden`)."), .unavailable])

    static let deleteFactor = APIOperation(
        .delete, "/api/v1/mfa/factors/{factor_id}", id: "deleteSecondFactor", tag: "Second factors", summary: "Remove a second factor",
        description: """
            Removes the factor; with the last confirmed one the recovery codes go too and sign-ins need one factor again. For a user \
            with a confirmed factor the session must have stepped up within `mfa.step-up-lifetime` (else 403 `aal2_required`). \
            Audited, and the verified address is mailed a notice.
            """,
        parameters: [.init("factor_id", in: .path, required: true, "The factor's ID.")],
        outcomes: [
            .init(204, "Removed."), .forbidden("Not a user's session (`forbidden`), or no recent step-up (`aal2_required`)."),
            .notFound("No factor with this ID for this user."), .unavailable,
        ])

    static let recoveryCodes = APIOperation(
        .post, "/api/v1/mfa/recovery-codes", id: "regenerateRecoveryCodes", tag: "Second factors", summary: "New recovery codes",
        description: """
            Ten new recovery codes, shown this once; the old ones stop working. Needs a session that stepped up within \
            `mfa.step-up-lifetime` (else 403 `aal2_required`). Audited.
            """,
        outcomes: [
            .init(200, "The new codes.", body: RecoveryCodesResponse.self, headers: ["Cache-Control"]),
            .forbidden("Not a user's session (`forbidden`), or no recent step-up (`aal2_required`)."),
            .notFound("The user has no confirmed factor."), .unavailable,
        ])
}
