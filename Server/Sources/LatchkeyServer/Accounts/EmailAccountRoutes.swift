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
    /// The pages the mails' links open, and the answers to their forms.
    let pages: PersonPages

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
            try await self.linkPage(request, purpose: .verify, page: .verify)
        }
        api.add(Self.verifyForm, requirements: [self.perClient]) { request, context in
            guard let accounts = self.accounts else { return self.pages.error(.notFound, "Not available", Self.off) }
            let form = try await request.form(VerifyEmailForm.self, upTo: context.maxUploadSize)
            guard let token = form?.token, !token.isEmpty else { return self.pages.error(.badRequest, "Link incomplete", "The form had no token.") }
            do {
                let account = try await accounts.verifyEmail(VerifyEmailRequest(token: token))
                return self.pages.answer(.ok, .verified, ["email": EmailAddress.displayed(account.email)])
            } catch ServiceError.invalidCode {
                return self.pages.error(.badRequest, "Link not valid", Self.spent)
            }
        }
        api.add(Self.resetPage) { request, _ in
            try await self.linkPage(request, purpose: .reset, page: .reset)
        }
        api.add(Self.resetForm, requirements: [self.perClient]) { request, context in
            guard let accounts = self.accounts else { return self.pages.error(.notFound, "Not available", Self.off) }
            let form = try await request.form(ResetPasswordForm.self, upTo: context.maxUploadSize)
            guard let token = form?.token, !token.isEmpty, let password = form?.newPassword else {
                return self.pages.error(.badRequest, "Form incomplete", "The form needs the token and a new password.")
            }
            do {
                // Read before the reset spends the link.
                let address = try await accounts.linkAddress(token: token, purpose: .reset)
                _ = try await accounts.resetPassword(ResetPasswordConfirmRequest(token: token, newPassword: password))
                return self.pages.answer(.ok, .resetDone, ["email": address.map(EmailAddress.displayed) ?? ""])
            } catch let error as ServiceError where error.kind == .weakPassword {
                return self.pages.error(.badRequest, "Choose another password", error.message + " Go back and try again.")
            } catch ServiceError.invalidCode {
                return self.pages.error(.badRequest, "Link not valid", Self.spent)
            }
        }
    }

    private static let off = "Email accounts are off on this server."
    private static let spent = "This link is expired or was already used. Ask the app for a new mail."

    /// The page a mailed link opens: the form that spends it, showing the address it went to; spends nothing.
    private func linkPage(_ request: Request, purpose: EmailCodePurpose, page: PersonPage) async throws -> Response {
        guard let accounts = self.accounts else { return self.pages.error(.notFound, "Not available", Self.off) }
        guard let token = Self.token(in: request) else {
            return self.pages.error(.badRequest, "Link incomplete", "This link has no token; open the whole link from the mail.")
        }
        guard let address = try await accounts.linkAddress(token: token, purpose: purpose) else {
            return self.pages.error(.badRequest, "Link not valid", Self.spent)
        }
        return self.pages.answer(.ok, page, ["email": EmailAddress.displayed(address), "token": token])
    }

    static let accepted = MailAcceptedResponse(
        message: "If this address has an account that can get this mail, it is on its way. It may take a minute; check the spam folder too.")

    /// The `token` query parameter, when there is exactly one.
    private static func token(in request: Request) -> String? {
        let values = request.uri.queryParameters.getAll("token")
        guard values.count == 1, let token = values.first.map({ String($0) }), !token.isEmpty, token.count <= 200 else { return nil }
        return token
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
