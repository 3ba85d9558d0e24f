import Foundation
import Hummingbird
import NIOCore

/// The context of the console's routes: the parent request's, with what ``AdminSignInMiddleware`` and
/// ``AdminFormMiddleware`` found.
struct AdminRequestContext: ChildRequestContext {
    var coreContext: CoreRequestContextStorage
    /// The request's context outside the console (the peer's address, the body limit).
    let parent: LatchkeyRequestContext
    /// The signed-in admin's session; set by ``AdminSignInMiddleware`` on every route behind it.
    var session: AdminSession?
    /// The posted form, read once its CSRF token matched (``AdminFormMiddleware``).
    var form = AdminForm()
    /// Before sign-in: the pre-session cookie's nonce the form's CSRF token was checked against.
    var preSessionNonce: String?

    init(context: LatchkeyRequestContext) {
        self.coreContext = context.coreContext
        self.parent = context
    }

    /// The signed-in admin's session: only routes behind ``AdminSignInMiddleware`` ask, and it lets none through without.
    func signedIn() throws -> AdminSession {
        guard let session = self.session else { throw HTTPError(.internalServerError) }
        return session
    }
}

/// Every field a console form posts; a form sends some of them (Hummingbird's `URLEncodedFormDecoder` reads it).
struct AdminForm: Decodable, Sendable {
    var csrf: String?
    var email: String?
    var password: String?
    var passwordConfirmation: String?
    var token: String?
    var limit: String?
    var expiresIn: String?
    var note: String?
    var back: String?
    /// A code from the admin's authenticator app, or one of their recovery codes.
    var code: String?
    /// A console account's role (`viewer`, `support`, `owner`).
    var role: String?

    enum CodingKeys: String, CodingKey {
        case csrf, email, password, token, limit, note, back, code, role
        case passwordConfirmation = "password_confirm"
        case expiresIn = "expires_in"
    }
}

/// Lets through only requests with a live console session (cookie `latchkey_admin`) at one of `stages`, putting it in
/// the context; others are sent to the sign-in page, or a session at another stage to its own page (the code, the
/// enrolment) (`refusal` `.signIn`: pages, sign-out), or refused with 403 (`.forbidden`: actions). A signed-in admin
/// whose role does not include `role` is answered 403 with the console's page saying so, before any form is read:
/// nothing is done.
struct AdminSignInMiddleware: RouterMiddleware {
    typealias Context = AdminRequestContext
    enum Refusal {
        case signIn
        case forbidden
    }

    let admin: AdminService
    let refusal: Refusal
    var stages: Set<AdminSession.Stage> = [.signedIn]
    var role: AdminRole = .viewer

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let cookie = request.cookies[AdminRoutes.sessionCookie]?.value, let session = try await self.admin.session(cookie: cookie) else {
            switch self.refusal {
            case .signIn: return AdminRoutes.redirect("/admin/login")
            case .forbidden: return AdminRoutes.forbidden()
            }
        }
        guard self.stages.contains(session.stage) else {
            switch self.refusal {
            case .signIn: return AdminRoutes.redirect(session.stage.home)
            case .forbidden: return AdminRoutes.forbidden()
            }
        }
        guard session.role.includes(self.role) else { return AdminRoutes.notAllowed(session, needs: self.role) }
        var context = context
        context.session = session
        return try await next(request, context)
    }
}

/// Reads a POSTed console form (at most 16 KiB) and lets it through only with the right CSRF token: the session's
/// (an HMAC of its cookie) behind ``AdminSignInMiddleware``, else the sign-in and setup forms' (an HMAC of the
/// pre-session cookie). A form that is not well formed (a repeated field, bad percent-encoding) or has the wrong token
/// is refused with 403, changing nothing. Other methods pass untouched.
struct AdminFormMiddleware: RouterMiddleware {
    typealias Context = AdminRequestContext
    let admin: AdminService

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard request.method == .post else { return try await next(request, context) }
        guard let form = try await request.form(AdminForm.self, upTo: 16 * 1024), let given = form.csrf else { return AdminRoutes.forbidden() }
        var context = context
        let expected: String
        if let session = context.session {
            expected = session.csrf
        } else {
            guard let nonce = request.cookies[AdminRoutes.preSessionCookie]?.value else { return AdminRoutes.forbidden() }
            expected = self.admin.preSessionCSRF(nonce: nonce)
            context.preSessionNonce = nonce
        }
        guard Secret.constantTimeEquals(given, expected) else { return AdminRoutes.forbidden() }
        context.form = form
        return try await next(request, context)
    }
}
