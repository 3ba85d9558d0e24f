import Foundation
import HTTPTypes
import Hummingbird
import LatchkeyAPI
import NIOCore

/// Email and password accounts: `POST /api/v1/auth/register`, `verify-email` (JSON, and the mail link's page and form),
/// `resend-verification`, `login`, `reset-password` (request, the link's page and form, and `confirm`),
/// `change-password` and `DELETE /api/v1/users/me/email`. Without `smtp.host` each answers 404 saying how to turn them on.
struct EmailAccountRoutes {
    let accounts: EmailAccountService?
    let verifier: AccessTokenVerifier
    let dpop: DPoPVerifier
    let limiter: RateLimiter
    let limits: AccountLimits
    let trustedProxies: Set<String>

    static let verifyPagePath = "/api/v1/auth/verify-email"
    static let resetPagePath = "/api/v1/auth/reset-password"

    private func service() throws -> EmailAccountService {
        guard let accounts = self.accounts else { throw ServiceError.emailNotConfigured }
        return accounts
    }

    private var perClient: RouteRequirement<LatchkeyRequestContext> {
        .limited(by: self.limits.email, limiter: self.limiter, trustedProxies: self.trustedProxies, counting: "requests")
    }

    func add(to api: APIRoutes<LatchkeyRequestContext>) {
        api.add(
            Self.register,
            requirements: [
                self.perClient, .proof(self.dpop),
                .token(
                    self.verifier, kinds: [.session], optional: true,
                    refusal: "Only a signed-in user's session can add an email address; send no Bearer to create a new account."),
            ]
        ) { request, context in
            let accounts = try self.service()
            let body = try await request.decode(as: EmailRegistrationRequest.self, context: context)
            let account = try await accounts.register(email: body.email, password: body.password, attachingTo: context.identity, proof: context.proof)
            return Answer(account, status: .created)
        }
        api.add(
            Self.removeEmail,
            requirements: [
                .proof(self.dpop),
                .token(self.verifier, kinds: [.session], refusal: "Only the account's own session can remove its email address."),
            ]
        ) { _, context in
            let accounts = try self.service()
            return Answer(try await accounts.removeEmail(token: try context.requireIdentity(), proof: context.proof))
        }
        api.add(Self.verifyEmail, requirements: [self.perClient]) { request, context in
            let accounts = try self.service()
            let body = try await request.decode(as: VerifyEmailRequest.self, context: context)
            return Answer(try await accounts.verifyEmail(body))
        }
        api.add(Self.resendVerification, requirements: [self.perClient]) { request, context in
            let accounts = try self.service()
            let body = try await request.decode(as: EmailAddressRequest.self, context: context)
            try await accounts.resendVerification(email: body.email)
            return Answer(Self.accepted, status: .accepted)
        }
        api.add(
            Self.login,
            requirements: [
                .proof(self.dpop), .issuesSessionTokens,
                .limited(by: self.limits.passwordLogin, limiter: self.limiter, trustedProxies: self.trustedProxies, counting: "sign-ins"),
            ]
        ) { request, context in
            let accounts = try self.service()
            let body = try await request.decode(as: PasswordLoginRequest.self, context: context)
            return Answer.tokens(try await accounts.login(email: body.email, password: body.password, proof: context.proof))
        }
        api.add(Self.resetPassword, requirements: [self.perClient]) { request, context in
            let accounts = try self.service()
            let body = try await request.decode(as: EmailAddressRequest.self, context: context)
            try await accounts.requestPasswordReset(email: body.email)
            return Answer(Self.accepted, status: .accepted)
        }
        api.add(Self.confirmReset, requirements: [self.perClient, .proof(self.dpop)]) { request, context in
            let accounts = try self.service()
            let body = try await request.decode(as: ResetPasswordConfirmRequest.self, context: context)
            return Answer(try await accounts.resetPassword(body, proof: context.proof))
        }
        api.add(
            Self.changePassword,
            requirements: [
                .proof(self.dpop), .token(self.verifier, kinds: [.session], refusal: "Only the account's own session can change its password."),
            ]
        ) { request, context in
            let accounts = try self.service()
            let body = try await request.decode(as: ChangePasswordRequest.self, context: context)
            return Answer(try await accounts.changePassword(body, token: try context.requireIdentity(), proof: context.proof))
        }
        // The mail's links open pages; only their buttons (a POST) spend the token, so a link scanner that opens
        // every link spends nothing.
        api.add(Self.verifyPage) { request, _ in
            guard self.accounts != nil else { return Self.page(.notFound, "Not available", "Email accounts are off on this server.") }
            guard let token = Self.token(in: request) else {
                return Self.page(.badRequest, "Link incomplete", "This link has no token; open the whole link from the mail.")
            }
            return Self.page(
                .ok, "Verify your email address",
                """
                <p>Press the button to verify your email address.</p>
                <form method="post" action="verify-email/form">
                <input type="hidden" name="token" value="\(MailTemplates.escapeHTML(token))">
                <button type="submit">Verify my email address</button>
                </form>
                """, raw: true)
        }
        api.add(Self.verifyForm, requirements: [self.perClient]) { request, context in
            guard let accounts = self.accounts else { return Self.page(.notFound, "Not available", "Email accounts are off on this server.") }
            let form = try await request.form(VerifyEmailForm.self, upTo: context.maxUploadSize)
            guard let token = form?.token, !token.isEmpty else { return Self.page(.badRequest, "Link incomplete", "The form had no token.") }
            do {
                let account = try await accounts.verifyEmail(VerifyEmailRequest(token: token))
                return Self.page(.ok, "Email address verified", "\(account.email) is verified. You can go back to the app and sign in.")
            } catch ServiceError.invalidCode {
                return Self.page(.badRequest, "Link not valid", "This link is expired or was already used. Ask the app for a new mail.")
            }
        }
        api.add(Self.resetPage) { request, _ in
            guard self.accounts != nil else { return Self.page(.notFound, "Not available", "Email accounts are off on this server.") }
            guard let token = Self.token(in: request) else {
                return Self.page(.badRequest, "Link incomplete", "This link has no token; open the whole link from the mail.")
            }
            return Self.page(
                .ok, "Choose a new password",
                """
                <form method="post" action="reset-password/form">
                <input type="hidden" name="token" value="\(MailTemplates.escapeHTML(token))">
                <p><label>New password <input type="password" name="new_password" autocomplete="new-password" minlength="8" required></label></p>
                <button type="submit">Set the new password</button>
                </form>
                <p>Setting it signs you out everywhere.</p>
                """, raw: true)
        }
        api.add(Self.resetForm, requirements: [self.perClient]) { request, context in
            guard let accounts = self.accounts else { return Self.page(.notFound, "Not available", "Email accounts are off on this server.") }
            let form = try await request.form(ResetPasswordForm.self, upTo: context.maxUploadSize)
            guard let token = form?.token, !token.isEmpty, let password = form?.newPassword else {
                return Self.page(.badRequest, "Form incomplete", "The form needs the token and a new password.")
            }
            do {
                _ = try await accounts.resetPassword(ResetPasswordConfirmRequest(token: token, newPassword: password))
                return Self.page(.ok, "Password changed", "Your password is changed and you are signed out everywhere. Sign in with the new one.")
            } catch let error as ServiceError where error.kind == .weakPassword {
                return Self.page(.badRequest, "Choose another password", error.message + " Go back and try again.")
            } catch ServiceError.invalidCode {
                return Self.page(.badRequest, "Link not valid", "This link is expired or was already used. Ask the app for a new mail.")
            }
        }
    }

    static let accepted = MailAcceptedResponse(
        message: "If this address has an account that can get this mail, it is on its way. It may take a minute; check the spam folder too.")

    /// The `token` query parameter, when there is exactly one.
    private static func token(in request: Request) -> String? {
        let values = request.uri.queryParameters.getAll("token")
        guard values.count == 1, let token = values.first.map({ String($0) }), !token.isEmpty, token.count <= 200 else { return nil }
        return token
    }

    /// A small HTML page that cannot be framed, cached, or leak its URL (which holds a token) in a Referer.
    static func page(_ status: HTTPResponse.Status, _ title: String, _ body: String, raw: Bool = false) -> Response {
        let content = raw ? body : "<p>\(MailTemplates.escapeHTML(body))</p>"
        let html = """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
            <title>\(MailTemplates.escapeHTML(title))</title>
            <style>body{font-family:-apple-system,Helvetica,Arial,sans-serif;max-width:30em;margin:3em auto;padding:0 1em}button{font-size:1.1em;padding:.5em 1em}</style>
            </head><body><h1>\(MailTemplates.escapeHTML(title))</h1>
            \(content)
            </body></html>
            """
        return Response(
            status: status,
            headers: [
                .contentType: "text/html; charset=utf-8", .cacheControl: "no-store", HTTPField.Name("Referrer-Policy")!: "no-referrer",
                HTTPField.Name("X-Frame-Options")!: "DENY",
                .contentSecurityPolicy: "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
            ],
            body: ResponseBody(byteBuffer: ByteBuffer(string: html)))
    }
}

/// What the verification page's form posts.
struct VerifyEmailForm: Decodable {
    var token: String?
}

/// What the password-reset page's form posts.
struct ResetPasswordForm: Decodable {
    var token: String?
    var newPassword: String?

    enum CodingKeys: String, CodingKey {
        case token
        case newPassword = "new_password"
    }
}
