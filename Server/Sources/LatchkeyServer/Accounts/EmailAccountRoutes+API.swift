import HTTPTypes
import LatchkeyAPI

extension EmailAccountRoutes {
    static let notConfigured = "Email and password accounts are off: no `smtp.host` is configured (404 `not_found` says so)."

    static let register = APIOperation(
        .post, "/api/v1/auth/register", id: "registerEmail", tag: "Email accounts", summary: "Add an email address and password",
        description: """
            With a session's Bearer (a device user), attaches the address and password to that user: same user ID, devices, budget and data. A new \
            way to sign in needs a recent sign-in, as linking does: a session begun within `tokens.recent-authentication` seconds (600), or a DPoP \
            proof made with the key the session is bound to, naming this access token in `ath` (each proof once); a session exchanged from an access \
            code never counts (403 `reauthentication_required`). Without a Bearer, creates a new user. Either way a verification mail goes out (a \
            6-digit code and a link, valid 15 minutes), committed with the account in one transaction. Until verified the address belongs to nobody: \
            it signs nobody in, blocks no other registration of it and gets no reset; the first to verify it keeps it and the other registrations of \
            it are removed. The address is parsed as an RFC 5322 addr-spec and normalised (trimmed, domain lowercased, IDN as punycode); verified \
            addresses are unique ignoring case. An address another account verified is answered 201 like any other (no enumeration): it is stored \
            unverified, no code goes out, and that account's address is mailed that someone tried to sign up with it (within the per-address mail \
            limits); with `email.reveal-existing` it is 422 `email_taken` instead. Passwords: 8 to 256 characters after NFKC normalisation, not the \
            address, not one of the most common passwords (400 `weak_password` with `reason`). Stored as an Argon2id PHC string.
            """,
        security: .optionalBearer, requestBody: EmailRegistrationRequest.self,
        requestExample: #"{"email": "player@example.com", "password": "correct horse battery staple"}"#,
        outcomes: [
            .init(201, "The account, not yet verified: check the mail.", body: EmailAccountResponse.self),
            .badRequest("Malformed body, `invalid_email`, or `weak_password` (with `reason`)."),
            .forbidden("The Bearer is not a user's session (`forbidden`), or shows no recent sign-in (`reauthentication_required`)."),
            .notFound(Self.notConfigured), .conflict("`email_already_set`: this user has one."),
            .init(422, "`email_taken`: another account verified this address (only with `email.reveal-existing`)."), .tooLarge, .unavailable,
        ])

    static let removeEmail = APIOperation(
        .delete, "/api/v1/users/me/email", id: "removeMyEmail", tag: "Email accounts", summary: "Remove the email address and password",
        description: """
            Removes the calling user's address and password: they no longer sign in. Needs a recent sign-in (a session begun within \
            `tokens.recent-authentication` seconds, or a DPoP proof made with the session's key for this access token, `ath`; never a \
            session exchanged from an access code). Ends every other session of the user, and mails the address a notice when it \
            was verified. Refused (409 `last_sign_in_method`) when the address is the user's only way to sign in (no device, no linked identity).
            A user with a confirmed second factor also needs a session that proved it within `mfa.step-up-lifetime` (10 minutes; `POST /api/v1/mfa/verify` with the Bearer steps up): 403 `aal2_required` otherwise.
            """,
        outcomes: [
            .init(200, "Removed; the other sessions ended.", body: EmailRemovedResponse.self),
            .forbidden("Not a session (`forbidden`), no recent sign-in (`reauthentication_required`), or no recent step-up (`aal2_required`)."),
            .notFound("No `smtp.host` is configured, or the user has no address."),
            .conflict("`last_sign_in_method`: the address is the user's only way to sign in."), .unavailable,
        ])

    static let verifyEmail = APIOperation(
        .post, "/api/v1/auth/verify-email", id: "verifyEmail", tag: "Email accounts", summary: "Verify an address with the mailed code",
        description: """
            `{email, code}` with the 6 digits from the mail, or `{token}` from the mail's link. Codes and links work once, for 15 \
            minutes; 5 wrong codes spend the code (ask for a new one).
            """,
        requestBody: VerifyEmailRequest.self, requestExample: #"{"email": "player@example.com", "code": "123456"}"#,
        outcomes: [
            .init(200, "The address is verified.", body: EmailAccountResponse.self),
            .badRequest("Malformed body, or `invalid_code`: wrong, expired, used or spent."), .notFound(Self.notConfigured), .tooLarge,
            .unavailable,
        ])

    static let resendVerification = APIOperation(
        .post, "/api/v1/auth/resend-verification", id: "resendVerification", tag: "Email accounts", summary: "Mail a new verification code",
        description: """
            Always 202, whether or not the address has an account (no enumeration). A new code replaces the old one. At most one mail \
            a minute and five an hour go to one address (`limits.mail-per-minute`, `limits.mail-per-hour`); beyond that the answer is \
            still 202 and nothing is sent.
            """,
        requestBody: EmailAddressRequest.self, requestExample: #"{"email": "player@example.com"}"#,
        outcomes: [
            .init(202, "Accepted.", body: MailAcceptedResponse.self), .badRequest("Malformed body or `invalid_email`."),
            .notFound(Self.notConfigured), .tooLarge, .unavailable,
        ])

    static let login = APIOperation(
        .post, "/api/v1/auth/login", id: "loginWithPassword", tag: "Email accounts", summary: "Sign in with email and password",
        description: """
            A new session (token pair) for a verified account. An unknown address and a wrong password are the same 401 \
            `invalid_credentials`, in the same time (a dummy hash is checked for unknown addresses). `email_not_verified` comes only \
            after the password matched. 10 failures for one account in 15 minutes (`limits.login-failures`) answer 429 \
            `too_many_attempts` with `Retry-After` for that account until the oldest failure leaves the window; it is never a \
            permanent lock. Password hashes run on their own threads (`passwords.hashing-threads`); when they and their queue are full \
            the answer is 503 with `Retry-After`. A hash at older parameters is replaced after a successful sign-in. The session's \
            access token says `aal: "aal1"`, `amr: ["pwd"]`; a user with a confirmed second factor gets 403 `mfa_required` with an \
            `mfa_token` for `POST /api/v1/mfa/verify` instead of tokens.
            """,
        requestBody: PasswordLoginRequest.self, requestExample: #"{"email": "player@example.com", "password": "correct horse battery staple"}"#,
        outcomes: [
            .init(200, "A new session.", body: TokenPairResponse.self, headers: ["Cache-Control"]), .badRequest(),
            .init(401, "`invalid_credentials`, or `email_not_verified`.", headers: ["WWW-Authenticate"]), .secondFactorRequired(),
            .notFound(Self.notConfigured),
            .init(429, "`too_many_attempts` for this account, or `rate_limited` for this client.", headers: ["Retry-After"]), .tooLarge,
            .init(503, "The database is not answering, or every password-hashing thread is busy.", headers: ["Retry-After"]),
        ])

    static let resetPassword = APIOperation(
        .post, "/api/v1/auth/reset-password", id: "requestPasswordReset", tag: "Email accounts", summary: "Mail a password reset code",
        description: """
            Always 202 (no enumeration). When the address has an account, a mail with a 6-digit code and a link (single use, valid 30 \
            minutes) is queued, within the same per-address mail limits as `resend-verification`. An address attached unverified to an \
            existing user belongs to nobody yet and gets no reset.
            """,
        requestBody: EmailAddressRequest.self, requestExample: #"{"email": "player@example.com"}"#,
        outcomes: [
            .init(202, "Accepted.", body: MailAcceptedResponse.self), .badRequest("Malformed body or `invalid_email`."),
            .notFound(Self.notConfigured), .tooLarge, .unavailable,
        ])

    static let confirmReset = APIOperation(
        .post, "/api/v1/auth/reset-password/confirm", id: "confirmPasswordReset", tag: "Email accounts",
        summary: "Set a new password with the reset code",
        description: """
            `{token, new_password}` with the mail link's token, or `{email, code, new_password}`. Sets the password, verifies the \
            address (the mail arrived) and gives the account back whole: every session of the user ends, and every device credential \
            (device secrets and bound keys) stops working, except that of the device that sent a DPoP proof made with its own bound \
            key; `revoked_devices` counts the devices signed out (they register again as new devices, or sign in with the password).
            """,
        requestBody: ResetPasswordConfirmRequest.self,
        requestExample: #"{"email": "player@example.com", "code": "123456", "new_password": "a new long passphrase"}"#,
        outcomes: [
            .init(200, "The password is set; every session and every other device credential ended.", body: PasswordChangedResponse.self),
            .badRequest("Malformed body, `invalid_code` or `weak_password`."), .notFound(Self.notConfigured), .tooLarge, .unavailable,
        ])

    static let changePassword = APIOperation(
        .post, "/api/v1/auth/change-password", id: "changePassword", tag: "Email accounts", summary: "Change the password",
        description: """
            With the session's Bearer and the current password. Revokes the user's other sessions (this one stays) and every device \
            credential (device secrets and bound keys) but that of the device that sent a DPoP proof made with its own bound key \
            (`revoked_devices` counts the others), and mails the verified address a notice. A wrong current password is 401 \
            `invalid_credentials` and counts toward the account's `limits.login-failures`. A user with a confirmed second factor also needs a session that proved it within `mfa.step-up-lifetime` (10 minutes; `POST /api/v1/mfa/verify` with the Bearer steps up): 403 `aal2_required` otherwise.
            """,
        requestBody: ChangePasswordRequest.self,
        requestExample: #"{"current_password": "correct horse battery staple", "new_password": "a new long passphrase"}"#,
        outcomes: [
            .init(200, "Changed; the other sessions and device credentials ended.", body: PasswordChangedResponse.self),
            .badRequest("Malformed body or `weak_password`."),
            .forbidden("Not a session (`forbidden`), or no recent step-up of a user with a second factor (`aal2_required`)."),
            .notFound("No `smtp.host` is configured, or this account has no password."),
            .init(429, "`too_many_attempts` for this account.", headers: ["Retry-After"]), .tooLarge, .unavailable,
        ])

    static let verifyPage = APIOperation(
        .get, "/api/v1/auth/verify-email", id: "verifyEmailPage", tag: "Email accounts", summary: "The verification link's page (HTML)",
        description: """
            What the mail's link opens: an HTML page with a button whose POST (`/api/v1/auth/verify-email/form`) verifies. Opening the \
            link spends nothing, so mail scanners that open every link do no harm. The page cannot be framed or cached and sends no Referer. \
            It carries `email.app-name` and shows the address in Unicode (an IDNA domain as written, not `xn--…`); `email.templates` \
            can replace it (`verify-page.html`, see the README).
            """,
        parameters: [.init("token", in: .query, required: true, "The link token from the mail.")],
        outcomes: [
            .page(200, "The page (text/html)."), .page(400, "The link has no token, or names no account (spent or made up): an HTML page."),
            .page(404, "Email accounts are off (an HTML page)."),
        ])

    static let verifyForm = APIOperation(
        .post, "/api/v1/auth/verify-email/form", id: "verifyEmailForm", tag: "Email accounts", summary: "The verification page's button (HTML)",
        description: "An `application/x-www-form-urlencoded` body with `token`. Answers an HTML page saying whether the address is verified.",
        outcomes: [
            .page(200, "Verified (an HTML page)."), .page(400, "The token is missing, wrong, expired or used (an HTML page)."),
            .page(404, "Email accounts are off (an HTML page)."), .tooLarge, .unavailable,
        ])

    static let resetPage = APIOperation(
        .get, "/api/v1/auth/reset-password", id: "resetPasswordPage", tag: "Email accounts", summary: "The reset link's page (HTML)",
        description: """
            What the reset mail's link opens: an HTML form for the new password, posted to `/api/v1/auth/reset-password/form`. Opening \
            the link spends nothing. It carries `email.app-name` and shows the address in Unicode; `email.templates` can replace it \
            (`reset-page.html`).
            """,
        parameters: [.init("token", in: .query, required: true, "The link token from the mail.")],
        outcomes: [
            .page(200, "The page (text/html)."), .page(400, "The link has no token, or names no account (spent or made up): an HTML page."),
            .page(404, "Email accounts are off (an HTML page)."),
        ])

    static let resetForm = APIOperation(
        .post, "/api/v1/auth/reset-password/form", id: "resetPasswordForm", tag: "Email accounts", summary: "The reset page's form (HTML)",
        description: """
            An `application/x-www-form-urlencoded` body with `token` and `new_password`. Sets the password and ends every session and \
            device credential, as `reset-password/confirm` does (a browser proves no device key); answers an HTML page.
            """,
        outcomes: [
            .page(200, "Changed (an HTML page)."), .page(400, "The token is wrong, expired or used, or the password is weak (an HTML page)."),
            .page(404, "Email accounts are off (an HTML page)."), .tooLarge, .unavailable,
        ])
}
