import HTTPTypes
import LatchkeyAPI

extension FederationRoutes {
    static let apple = APIOperation(
        .post, "/api/v1/auth/apple", id: "signInWithApple", tag: "Federation",
        summary: "Sign in with Apple, or link Apple to the calling session's user",
        description: """
            Verifies Apple's identity token: RS256 only, the key chosen by `kid` from Apple's JWKS (`apple.jwks-url`, cached per its \
            `Cache-Control`; an unknown `kid` refetches at most once a minute), `iss` = `https://appleid.apple.com`, `aud` one of \
            `apple.client-ids`, `exp`, `iat` not ahead beyond `apple.leeway` (60 s), and `nonce` = lowercase hex SHA-256 of `raw_nonce` \
            (constant time; each nonce once). `email_verified` and `is_private_email` may be strings or booleans.

            Without a Bearer, Apple's `sub` maps to a Latchkey user: the first sign-in creates one (kind `federated`; 201), later ones \
            return it (200). With a session's Bearer the Apple ID is linked to that session's user, which keeps its ID and data (200); \
            linking needs a recent sign-in (403 `reauthentication_required` otherwise), and an Apple ID of another user is 409 \
            `identity_already_linked` with nothing merged. Everything the sign-in writes is one transaction. A link mails the user's \
            verified email address, when it has one, a notice that a way to sign in was added.

            With `authorization_code` and a Sign in with Apple key configured, the code is exchanged at Apple's `/auth/token` and \
            Apple's refresh token kept sealed, so account deletion can revoke it; when Apple refuses the code: 502 `upstream_error`, \
            nothing created. Without `apple.client-ids` the answer is 404.

            A user with a confirmed second factor gets no tokens: 403 `mfa_required` with an `mfa_token` for             `POST /api/v1/mfa/verify` (the identity is linked or found all the same). The session's access token says `amr: ["apple"]`.
            """,
        requestBody: AppleSignInRequest.self,
        outcomes: [
            .init(
                200, "A known Apple ID signed in, or Apple linked to the Bearer's user: a new session.", body: TokenPairResponse.self,
                headers: ["Cache-Control"]),
            .init(201, "A user was created for this Apple ID: its first session.", body: TokenPairResponse.self, headers: ["Cache-Control"]),
            .badRequest(), .init(401, "The identity token or nonce was refused, or the Bearer is not valid.", headers: ["WWW-Authenticate"]),
            .secondFactorRequired(
                also: "the Bearer is not a user's session (`forbidden`), or shows no recent sign-in (`reauthentication_required`)."),
            .notFound("Sign in with Apple is not enabled on this server."),
            .conflict("The Apple ID is linked to another user (`identity_already_linked`); nothing was merged."), .tooLarge,
            .badGateway("Apple refused or did not answer the authorization-code exchange; nothing was changed."), .unavailable,
        ])

    static let google = APIOperation(
        .post, "/api/v1/auth/google", id: "signInWithGoogle", tag: "Federation",
        summary: "Sign in with Google, or link Google to the calling session's user",
        description: """
            Verifies a Google ID token (from GoogleSignIn-iOS or Google Identity Services) without a network call once Google's keys \
            are cached: RS256 only, the key chosen by `kid` from Google's JWKS (`google.jwks-url`, cached per its `Cache-Control`; an \
            unknown `kid` refetches at most once a minute), `iss` = `https://accounts.google.com` or `accounts.google.com`, `aud` one \
            of `google.client-ids`, `azp` (when present) one of them too, `exp` and `iat` within `google.leeway` (60 s), and, with \
            `google.hosted-domains` set, `hd` one of them (a consumer account's token, without `hd`, is refused).

            `nonce` is compared raw, byte for byte: Google puts the app's nonce in the token as given, not hashed. When the request \
            carries `nonce` the token must carry the same; a token that carries a nonce the request does not send is refused. The \
            token's `email` is kept on the identity only when `email_verified` is true, and is never used to find or merge accounts: \
            the Google subject alone names the account.

            Without a Bearer, Google's `sub` maps to a Latchkey user: the first sign-in creates one (kind `federated`; 201), later \
            ones return it (200). With a session's Bearer the Google account is linked to that session's user, which keeps its ID \
            and data (200); linking needs a recent sign-in (403 `reauthentication_required` otherwise), and a Google account of \
            another user is 409 `identity_already_linked` with nothing merged. Everything the sign-in writes is one transaction. \
            Counts in `limits.sign-in` with Apple and token exchange. Without `google.client-ids` the answer is 404.

            A user with a confirmed second factor gets no tokens: 403 `mfa_required` with an `mfa_token` for \
            `POST /api/v1/mfa/verify` (the identity is linked or found all the same). A disabled user: 403 `user_disabled`. The \
            session's access token says `amr: ["google"]`.
            """,
        requestBody: GoogleSignInRequest.self,
        outcomes: [
            .init(
                200, "A known Google account signed in, or Google linked to the Bearer's user: a new session.", body: TokenPairResponse.self,
                headers: ["Cache-Control"]),
            .init(
                201, "A user was created for this Google account: its first session.", body: TokenPairResponse.self, headers: ["Cache-Control"]),
            .badRequest(),
            .init(401, "The ID token or nonce was refused (`invalid_token`), or the Bearer is not valid.", headers: ["WWW-Authenticate"]),
            .secondFactorRequired(
                also:
                    "the user is disabled (`user_disabled`), the Bearer is not a user's session (`forbidden`), or shows no recent sign-in "
                    + "(`reauthentication_required`)."),
            .notFound("Sign in with Google is not enabled on this server."),
            .conflict("The Google account is linked to another user (`identity_already_linked`); nothing was merged."), .tooLarge,
            .badGateway("Google's signing keys could not be fetched; nothing was changed."), .unavailable,
        ])

    static let tokenExchange = APIOperation(
        .post, "/api/v1/auth/token-exchange", id: "exchangeProviderToken", tag: "Federation",
        summary: "Trade an identity provider's token for a Latchkey session",
        description:
            "`subject_token` must be a token of a configured identity provider (`providers.*`: Clerk or any OIDC issuer), checked as on "
            + "every JWT route (algorithm, `kid` from its JWKS or PEM key, exact `iss`, `exp`, `nbf`/`iat`, `aud` among its audiences "
            + "unless `any`, `azp` among its authorized parties when present, `typ`). Its subject maps to a Latchkey user, created (kind "
            + "`federated`) the first time; the user and the session are written in one transaction. Answers a token pair (`amr: [\"fed\"]`); "
            + "for a user with a confirmed second factor, 403 `mfa_required` with an `mfa_token` for `POST /api/v1/mfa/verify` instead.",
        requestBody: TokenExchangeRequest.self,
        outcomes: [
            .init(200, "A new session for the provider user's Latchkey user.", body: TokenPairResponse.self, headers: ["Cache-Control"]),
            .badRequest(), .init(401, "Not a valid token of a configured provider.", headers: ["WWW-Authenticate"]),
            .secondFactorRequired(), .tooLarge, .badGateway("The provider's signing keys could not be fetched."), .unavailable,
        ])

    static let unlink = APIOperation(
        .delete, "/api/v1/users/me/identities/{provider}", id: "unlinkIdentity", tag: "Federation", summary: "Unlink an identity from the account",
        description:
            "Unlinks the account's identities at `provider` (`apple`, or a configured provider's name); Apple's refresh token for the app "
            + "is revoked at Apple first (502 `upstream_error`, nothing changed, when Apple does not confirm). Needs a recent sign-in, as "
            + "account deletion does. An account created by an identity provider keeps its last identity: 409 `last_sign_in_method`. The "
            + "user's verified email address, when it has one, is mailed a notice."
            + " A user with a confirmed second factor also needs a session that proved it within `mfa.step-up-lifetime` (10 minutes; `POST /api/v1/mfa/verify` with the Bearer steps up): 403 `aal2_required` otherwise.",
        parameters: [.init("provider", in: .path, required: true, "`apple`, or a configured provider's name.")],
        outcomes: [
            .init(200, "The identities were unlinked.", body: UnlinkIdentityResponse.self),
            .forbidden(
                "Not the account's session (`forbidden`), no recent sign-in (`reauthentication_required`), or no recent step-up (`aal2_required`)."),
            .notFound("No identity of that provider is linked."),
            .conflict("The identity is the account's only way to sign in (`last_sign_in_method`)."),
            .badGateway("Apple did not confirm revoking its token; nothing changed."), .unavailable,
        ])
}
