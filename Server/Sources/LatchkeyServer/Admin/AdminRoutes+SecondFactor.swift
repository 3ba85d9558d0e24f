import Foundation
import HTTPTypes
import Hummingbird
import LatchkeyAPI
import LatchkeyQR

/// The console's second factor: the code page of a sign-in's second step, the enrolment (a QR code drawn as inline
/// SVG, no script; the secret as text beside it), the recovery codes shown once, and the account page.
extension AdminRoutes {
    func addSecondFactorRoutes(to group: RouterGroup<LatchkeyRequestContext>, forms: AdminFormMiddleware) {
        /// The routes for sessions at `stages`: others are sent to their page (GET) or refused with 403 (POST).
        func routes(_ stages: Set<AdminSession.Stage>, _ refusal: AdminSignInMiddleware.Refusal) -> RouterGroup<AdminRequestContext> {
            group.group(context: AdminRequestContext.self)
                .add(middleware: AdminSignInMiddleware(admin: self.admin, refusal: refusal, stages: stages)).add(middleware: forms)
        }
        // After the password of an admin with a factor: the code, and nothing else.
        routes([.needsCode], .signIn).get("sign-in/code") { _, context in self.codePage(try context.signedIn()) }
        routes([.needsCode], .forbidden).post("sign-in/code") { request, context in try await self.passSecondStep(request, context: context) }

        // Enrolment: where an admin without a factor is held while `admin.require-mfa`, else reached from the account page.
        let enrolling: Set<AdminSession.Stage> = [.needsEnrolment, .signedIn]
        routes(enrolling, .signIn).get("account/second-factor") { _, context in try await self.enrolmentPage(try context.signedIn()) }
        routes(enrolling, .forbidden).post("account/second-factor") { request, context in
            try await self.confirmEnrolment(request, context: context)
        }
    }

    private func codePage(_ session: AdminSession, flash: Flash? = nil, status: HTTPResponse.Status = .ok) -> Response {
        self.render("second-step", title: "Enter your code", session: session, ["email": session.email], flash: flash, status: status)
    }

    /// The code (or a recovery code) of the sign-in's second step: the console, or the code page again with why not.
    private func passSecondStep(_ request: Request, context: AdminRequestContext) async throws -> Response {
        let session = try context.signedIn()
        do {
            let step = try await self.admin.passSecondStep(code: context.form.code ?? "", session: session)
            let details =
                switch step {
                case .authenticatorCode: "password and authenticator code"
                case .recoveryCode(let remaining): "password and a recovery code (\(remaining) left)"
                }
            try await self.console.record(self.actor(session, request, context), AuditAction.adminSignIn, admin: session.email, details: details)
            if case .recoveryCode = step { return Self.redirect("/admin?done=recovery-code-used") }
            return Self.redirect("/admin")
        } catch let error as ServiceError {
            return self.codePage(session, flash: .error(Self.describeCodeRefusal(error)), status: APIError(error).status)
        }
    }

    /// The enrolment page: the secret's QR code and text and a form for a code of it; the account page once the admin
    /// has a confirmed factor.
    private func enrolmentPage(_ session: AdminSession, flash: Flash? = nil, status: HTTPResponse.Status = .ok) async throws -> Response {
        guard let enrolment = try await self.admin.enrolment(session: session) else { return Self.redirect("/admin/account") }
        // An otpauth URI is about a hundred bytes: far below what a QR code holds.
        let qr = try QRCode(text: enrolment.uri, errorCorrection: .medium).svg(
            moduleSize: 4, quietZone: 4, label: "QR code for your authenticator app")
        return self.render(
            "enrol", title: "Set up your authenticator app", session: session,
            ["qr": qr, "secret": enrolment.secret, "required": session.stage == .needsEnrolment], flash: flash, status: status)
    }

    /// A code of the enrolment's secret: the factor is confirmed and the recovery codes are shown, this once.
    private func confirmEnrolment(_ request: Request, context: AdminRequestContext) async throws -> Response {
        let session = try context.signedIn()
        do {
            let codes = try await self.admin.confirmEnrolment(code: context.form.code ?? "", session: session)
            try await self.console.record(
                self.actor(session, request, context), AuditAction.adminMFAEnable, admin: session.email, details: "authenticator app (TOTP)")
            var signedIn = session
            signedIn.stage = .signedIn
            signedIn.hasSecondFactor = true
            return self.render(
                "recovery-codes", title: "Your recovery codes", session: signedIn, nav: nil, ["codes": codes],
                flash: .ok("Your authenticator app is set up: every sign-in asks for its code from now on."))
        } catch let error as ServiceError where error.kind == .notFound {
            return Self.redirect("/admin/account")
        } catch let error as ServiceError {
            return try await self.enrolmentPage(session, flash: .error(Self.describeCodeRefusal(error)), status: APIError(error).status)
        }
    }

    func accountPage(_ session: AdminSession, flash: Flash?) -> Response {
        self.render(
            "account", title: "Your account", session: session, ["email": session.email, "has_factor": session.hasSecondFactor], flash: flash)
    }

    private func actor(_ session: AdminSession, _ request: Request, _ context: AdminRequestContext) -> AuditActor {
        AuditActor(name: "admin:\(session.email)", source: context.parent.clientIP(of: request, trustedProxies: self.trustedProxies))
    }

    /// Why a code was refused, worded for the page that asked for it.
    static func describeCodeRefusal(_ error: ServiceError) -> String {
        switch error.kind {
        case .invalidCode: "That code is not right, or it was used already. Enter the current code from your authenticator app."
        case .tooManyAttempts: "Too many wrong codes; try again in \(error.retryAfter ?? 1) seconds."
        default: Self.describe(error).1
        }
    }
}
