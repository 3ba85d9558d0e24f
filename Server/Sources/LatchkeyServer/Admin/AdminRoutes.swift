import Foundation
import HTTPTypes
import Hummingbird
import LatchkeyAPI
import Logging
import Mustache
import NIOCore

/// The admin console under `/admin`: server-rendered pages (Mustache) for support staff, no JavaScript.
///
/// Every page but sign-in and setup needs a console session (cookie `latchkey_admin`: `HttpOnly`, `SameSite=Strict`,
/// `Path=/admin`, `Secure` behind HTTPS: ``AdminSignInMiddleware``); every form carries a CSRF token (an HMAC of the
/// session cookie; for sign-in and setup, of a pre-session cookie) and a POST without it is refused with 403
/// (``AdminFormMiddleware``, which reads forms with Hummingbird's `URLEncodedFormDecoder`). Deleting a user, rotating the signing
/// key and issuing an access code also need the admin's password, entered again in the form (`password`). Every answer has
/// `Content-Security-Policy: default-src 'self'`, `X-Frame-Options: DENY`, `Cache-Control: no-store`. Every action goes
/// through ``ConsoleService`` (the services the API and CLI use) and is written to the audit log (`admin:<email>`, from the
/// client's address); the routes read forms and render pages, and read nothing from the store themselves.
///
/// Sign-in has a second step: an admin with a TOTP factor gives a code from the authenticator app (or a recovery code)
/// after the password, and until then the session reaches the code page only; an admin without one, while
/// `admin.require-mfa`, is sent to enrol (a QR code drawn as inline SVG by the server, the secret as text) and reaches
/// nothing else until done (``AdminSession/Stage``).
package struct AdminRoutes: Sendable {
    let console: ConsoleService
    let admin: AdminService
    let secureCookies: Bool
    let trustedProxies: Set<String>
    let startedAt: Date

    static let sessionCookie = "latchkey_admin"
    static let preSessionCookie = "latchkey_admin_pre"
    static let pageSize = 25

    /// The console over `console` and `admin`; cookies are `Secure` when `secureCookies`; `startedAt` is shown on the
    /// overview.
    package init(console: ConsoleService, admin: AdminService, secureCookies: Bool, trustedProxies: Set<String>, startedAt: Date) {
        self.console = console
        self.admin = admin
        self.secureCookies = secureCookies
        self.trustedProxies = trustedProxies
        self.startedAt = startedAt
    }

    package func add(to router: Router<LatchkeyRequestContext>) {
        router.add(middleware: AdminNotFoundMiddleware(admin: self.admin))
        let group = router.group("admin").add(middleware: AdminHeadersMiddleware())
        group.get("static/admin.css") { _, _ in Self.asset(AdminTemplates.stylesheet, type: "text/css; charset=utf-8") }
        group.get("static/favicon.svg") { _, _ in Self.asset(AdminTemplates.favicon, type: "image/svg+xml") }
        let forms = AdminFormMiddleware(admin: self.admin)

        // Before a session: sign-in and setup, their forms checked against the pre-session cookie.
        let signIn = group.group(context: AdminRequestContext.self).add(middleware: forms)
        signIn.get("login") { request, context in try await self.loginPage(request, context: context) }
        signIn.post("login") { request, context in try await self.login(request, context: context) }
        signIn.get("setup") { request, context in try await self.setupPage(request, context: context) }
        signIn.post("setup") { request, context in try await self.setup(request, context: context) }

        // Sign-out, at any stage of a sign-in.
        let signOut = group.group(context: AdminRequestContext.self)
            .add(middleware: AdminSignInMiddleware(admin: self.admin, refusal: .signIn, stages: Set(AdminSession.Stage.allCases)))
            .add(middleware: forms)
        signOut.post("logout") { request, context in try await self.logout(request, context: context) }
        self.addSecondFactorRoutes(to: group, forms: forms)

        // Pages need a signed-in session, else the sign-in page (or the second step's page).
        let pages = group.group(context: AdminRequestContext.self)
            .add(middleware: AdminSignInMiddleware(admin: self.admin, refusal: .signIn)).add(middleware: forms)
        pages.get("account") { request, context in
            try await self.page(request, context) { session in self.accountPage(session, flash: Self.flash(request)) }
        }
        pages.get { request, context in
            try await self.page(request, context) { session in try await self.overview(session, flash: Self.flash(request)) }
        }
        pages.get("users") { request, context in try await self.page(request, context) { session in try await self.users(request, session) } }
        pages.get("users/:id") { request, context in
            try await self.page(request, context) { session in try await self.user(try Self.uuid(context, "id"), session, flash: Self.flash(request))
            }
        }
        self.addSupportPages(to: pages)
        self.addAccountPages(to: pages)
        pages.get("access-codes") { request, context in
            try await self.page(request, context) { session in try await self.codes(session, flash: Self.flash(request)) }
        }
        pages.get("keys") { request, context in
            try await self.page(request, context) { session in try await self.keys(session, flash: Self.flash(request)) }
        }
        pages.get("webhooks") { request, context in try await self.page(request, context) { session in try await self.webhooks(session) } }
        pages.get("audit") { request, context in try await self.page(request, context) { session in try await self.audit(request, session) } }

        // Actions need a session, else 403, and the session's CSRF token in their form; and a role that includes theirs,
        // else 403 with the console's page. Acting on one user (and retrying mail) is support's; keys, access codes,
        // deleting users and the console's accounts are the owner's.
        func actionGroup(_ role: AdminRole) -> RouterGroup<AdminRequestContext> {
            group.group(context: AdminRequestContext.self)
                .add(middleware: AdminSignInMiddleware(admin: self.admin, refusal: .forbidden, role: role)).add(middleware: forms)
        }
        let actions = actionGroup(.support)
        let owner = actionGroup(.owner)
        self.addSupportActions(to: actions)
        self.addAccountActions(to: owner)
        // The confirmation page of an owner's action.
        group.group(context: AdminRequestContext.self)
            .add(middleware: AdminSignInMiddleware(admin: self.admin, refusal: .signIn, role: .owner)).add(middleware: forms)
            .get("users/:id/delete") { request, context in
                try await self.page(request, context) { session in try await self.confirmDelete(try Self.uuid(context, "id"), session) }
            }
        actions.post("users/:id/sessions/:session/revoke") { request, context in
            try await self.action(request, context) { session, _, actor in
                let (user, sessionID) = (try Self.uuid(context, "id"), try Self.uuid(context, "session"))
                let revoked = try await self.console.revokeSession(sessionID, ofUser: user, by: actor)
                return .redirect("/admin/users/\(user)?done=" + (revoked ? "session-revoked" : "session-ended"))
            }
        }
        actions.post("users/:id/sessions/revoke-all") { request, context in
            try await self.action(request, context) { _, _, actor in
                let user = try Self.uuid(context, "id")
                try await self.console.revokeSessions(ofUser: user, by: actor)
                return .redirect("/admin/users/\(user)?done=sessions-revoked")
            }
        }
        actions.post("users/:id/budget") { request, context in
            try await self.action(request, context) { session, form, actor in
                let user = try Self.uuid(context, "id")
                try await self.console.requireUser(user)
                guard let text = form.limit, let limit = Double(text.trimmingCharacters(in: .whitespaces)), limit >= 0, limit.isFinite else {
                    return .page(try await self.user(user, session, flash: .error("The limit must be a number, 0 or more."), status: .badRequest))
                }
                try await self.console.setBudget(ofUser: user, to: limit, by: actor)
                return .redirect("/admin/users/\(user)?done=budget-set")
            }
        }
        owner.post("users/:id/access-codes") { request, context in
            try await self.action(request, context) { session, form, actor in
                let user = try Self.uuid(context, "id")
                try await self.console.requireUser(user)
                try await self.admin.confirmPassword(form.password ?? "", session: session)
                var lifetime: TimeInterval?
                if let text = form.expiresIn?.trimmingCharacters(in: .whitespaces), !text.isEmpty {
                    guard let seconds = Self.duration(text) else {
                        return .page(
                            try await self.user(
                                user, session, flash: .error("“Expires in” takes a number with s, m, h or d, e.g. 30d."), status: .badRequest))
                    }
                    lifetime = seconds
                }
                let note = form.note.map { String($0.trimmingCharacters(in: .whitespacesAndNewlines).prefix(200)) }.flatMap {
                    $0.isEmpty ? nil : $0
                }
                let issued = try await self.console.issueCode(forUser: user, expiresIn: lifetime, note: note, by: actor)
                return .page(
                    self.render(
                        "issued", title: "Access code issued", session: session, nav: "users",
                        ["user": user, "code": issued.code, "expires": Self.format(issued.record.expiresAt)],
                        flash: .ok("Access code issued. Copy it now: it is not shown again.")))
            }
        }
        owner.post("users/:id/delete") { request, context in
            try await self.action(request, context) { session, form, actor in
                let user = try Self.uuid(context, "id")
                try await self.console.requireUser(user)
                try await self.admin.confirmPassword(form.password ?? "", session: session)
                try await self.console.deleteUser(user, by: actor)
                return .redirect("/admin/users?done=user-deleted")
            }
        }
        actions.post("users/:id/second-factors/reset") { request, context in
            try await self.action(request, context) { _, _, actor in
                let user = try Self.uuid(context, "id")
                try await self.console.resetSecondFactors(ofUser: user, by: actor)
                return .redirect("/admin/users/\(user)?done=second-factors-reset")
            }
        }
        actions.post("users/:id/passkeys/:passkey/remove") { request, context in
            try await self.action(request, context) { _, _, actor in
                let (user, passkey) = (try Self.uuid(context, "id"), try Self.uuid(context, "passkey"))
                try await self.console.removePasskey(passkey, ofUser: user, by: actor)
                return .redirect("/admin/users/\(user)?done=passkey-removed")
            }
        }
        owner.post("access-codes/:code/revoke") { request, context in
            try await self.action(request, context) { _, form, actor in
                let code = try Self.uuid(context, "code")
                try await self.console.revokeCode(code, by: actor)
                if let back = form.back, let user = UUID(uuidString: back)?.uuidString.lowercased() {
                    return .redirect("/admin/users/\(user)?done=code-revoked")
                }
                return .redirect("/admin/access-codes?done=code-revoked")
            }
        }
        owner.post("keys/rotate") { request, context in
            try await self.action(request, context) { session, form, actor in
                try await self.admin.confirmPassword(form.password ?? "", session: session)
                try await self.console.rotateKey(by: actor)
                return .redirect("/admin/keys?done=key-rotated")
            }
        }
    }

    // MARK: Sign-in, setup, sign-out

    private func loginPage(_ request: Request, context: AdminRequestContext) async throws -> Response {
        if let cookie = request.cookies[Self.sessionCookie]?.value, try await self.admin.session(cookie: cookie) != nil {
            return Self.redirect("/admin")
        }
        return self.preSessionPage("login", title: "Sign in", request, ["email": ""])
    }

    private func login(_ request: Request, context: AdminRequestContext) async throws -> Response {
        let (form, nonce) = (context.form, context.preSessionNonce ?? "")
        let email = form.email ?? ""
        let ip = context.parent.clientIP(of: request, trustedProxies: self.trustedProxies)
        let values: [String: Any] = ["csrf": self.admin.preSessionCSRF(nonce: nonce), "email": email]
        do {
            let session = try await self.admin.login(email: email, password: form.password ?? "", ip: ip)
            // With a factor, the sign-in is audited once the code is given.
            if session.stage != .needsCode {
                try await self.console.record(
                    AuditActor(name: "admin:\(session.email)", source: ip), AuditAction.adminSignIn, admin: session.email,
                    details: "password only: no second factor")
            }
            return self.signedIn(session)
        } catch let error as ServiceError {
            let (status, text) = Self.describe(error)
            return self.render("login", title: "Sign in", session: nil, values, flash: .error(text), status: status)
        }
    }

    private func setupPage(_ request: Request, context: AdminRequestContext) async throws -> Response {
        let tokens = request.uri.queryParameters.getAll("token")
        guard tokens.count == 1, let token = tokens.first.map({ String($0) }), token.count <= 100,
            let account = try await self.admin.setupAccount(token: token)
        else {
            return self.message(
                "Link not valid", "This setup link is expired or was already used. Ask for a new one (latchkey admin create).", status: .badRequest)
        }
        return self.preSessionPage("setup", title: "Set your password", request, ["token": token, "email": account.email])
    }

    private func setup(_ request: Request, context: AdminRequestContext) async throws -> Response {
        let (form, nonce) = (context.form, context.preSessionNonce ?? "")
        let token = form.token ?? ""
        do {
            let ip = context.parent.clientIP(of: request, trustedProxies: self.trustedProxies)
            let session = try await self.admin.completeSetup(
                token: token, password: form.password ?? "", confirmation: form.passwordConfirmation ?? "", ip: ip)
            // An account given a new link keeps its factor: then the sign-in is audited once the code is given.
            if session.stage != .needsCode {
                try await self.console.record(
                    AuditActor(name: "admin:\(session.email)", source: ip), AuditAction.adminSignIn, admin: session.email,
                    details: "password set with the setup link")
            }
            return self.signedIn(session)
        } catch let error as ServiceError {
            let (status, text) = Self.describe(error)
            guard error.kind != .invalidCode, let account = try await self.admin.setupAccount(token: token) else {
                return self.message("Link not valid", text, status: status)
            }
            return self.render(
                "setup", title: "Set your password", session: nil,
                ["csrf": self.admin.preSessionCSRF(nonce: nonce), "token": token, "email": account.email], flash: .error(text), status: status)
        }
    }

    /// The sign-in or setup page, before any session: its form's CSRF token is signed with the pre-session nonce (the
    /// cookie's, or a new one), and the cookie is set.
    private func preSessionPage(_ template: String, title: String, _ request: Request, _ values: [String: Any]) -> Response {
        let nonce = request.cookies[Self.preSessionCookie]?.value ?? Secret.generate()
        var values = values
        values["csrf"] = self.admin.preSessionCSRF(nonce: nonce)
        var response = self.render(template, title: title, session: nil, values)
        response.setCookie(self.cookie(Self.preSessionCookie, nonce))
        return response
    }

    private func logout(_ request: Request, context: AdminRequestContext) async throws -> Response {
        let session = try context.signedIn()
        try await self.admin.logout(cookie: request.cookies[Self.sessionCookie]?.value ?? "")
        try await self.console.record(
            AuditActor(name: "admin:\(session.email)", source: context.parent.clientIP(of: request, trustedProxies: self.trustedProxies)),
            AuditAction.adminSignOut, admin: session.email)
        var response = Self.redirect("/admin/login")
        response.setCookie(self.cookie(Self.sessionCookie, "", maxAge: 0))
        return response
    }

    /// The answer to a password that started `session`: its cookie, and on to the page of its stage.
    private func signedIn(_ session: AdminSession) -> Response {
        var response = Self.redirect(session.stage.home)
        response.setCookie(self.cookie(Self.sessionCookie, session.cookie ?? ""))
        response.setCookie(self.cookie(Self.preSessionCookie, "", maxAge: 0))
        return response
    }

    // MARK: Pages

    /// A page for the signed-in admin (``AdminSignInMiddleware`` sent others to the sign-in page).
    func page(
        _ request: Request, _ context: AdminRequestContext, _ body: (AdminSession) async throws -> Response
    ) async throws -> Response {
        let session = try context.signedIn()
        do { return try await body(session) } catch AdminPageError.notFound {
            return self.message(
                "Not found", "There is nothing here: the user, session or code does not exist (any more).", status: .notFound, session: session)
        }
    }

    enum ActionResult {
        case redirect(String)
        case page(Response)
    }

    /// A form's POST by the signed-in admin, its CSRF token checked (``AdminSignInMiddleware`` and ``AdminFormMiddleware``
    /// refused anything else with 403, changing nothing); done as the admin, from the client's address.
    func action(
        _ request: Request, _ context: AdminRequestContext,
        _ body: (AdminSession, AdminForm, AuditActor) async throws -> ActionResult
    ) async throws -> Response {
        let session = try context.signedIn()
        let actor = AuditActor(name: "admin:\(session.email)", source: context.parent.clientIP(of: request, trustedProxies: self.trustedProxies))
        do {
            switch try await body(session, context.form, actor) {
            case .redirect(let location): return Self.redirect(location)
            case .page(let response): return response
            }
        } catch AdminPageError.notFound {
            return self.message(
                "Not found", "There is nothing here: the user, session or code does not exist (any more).", status: .notFound, session: session)
        } catch let error as ServiceError {
            // The only credential an action checks is the admin's password, entered again.
            let (status, text) = Self.describe(error, confirming: true)
            return self.message("Not done", text, status: status, session: session)
        }
    }

    private func overview(_ session: AdminSession, flash: Flash?) async throws -> Response {
        let now = self.console.now()
        let figures = try await self.console.overview(at: now)
        let limits = self.console.refusalsByRoute().map { ["route": $0.route, "count": String($0.count)] }
        return self.render(
            "overview", title: "Overview", session: session, nav: "overview",
            [
                "users": String(figures.users), "devices": String(figures.devices), "live_sessions": String(figures.liveSessions),
                "sign_ins": String(figures.signInsPerHour.reduce(0, +)), "refreshes": String(figures.refreshesPerHour.reduce(0, +)),
                "chart": AdminChart.svg(signIns: figures.signInsPerHour, refreshes: figures.refreshesPerHour, endingAt: now),
                "limits": limits, "since": Self.format(self.startedAt),
            ], flash: flash)
    }

    private func users(_ request: Request, _ session: AdminSession) async throws -> Response {
        let parameters = request.uri.queryParameters
        func parameter(_ name: String) -> String {
            String((parameters.get(name) ?? "").prefix(200)).trimmingCharacters(in: .whitespaces)
        }
        let filter = AdminUserFilter(
            text: parameter("q"), kind: parameter("kind").isEmpty ? nil : parameter("kind"),
            provider: parameter("provider").isEmpty ? nil : parameter("provider"),
            disabled: ["true": true, "false": false][parameter("disabled")])
        let page = max(1, min(10_000, Int(parameters.get("page") ?? "") ?? 1))
        var users = try await self.console.users(filter, limit: Self.pageSize + 1, offset: (page - 1) * Self.pageSize)
        let more = users.count > Self.pageSize
        users = Array(users.prefix(Self.pageSize))
        // The filters again in the pager's links (percent-encoded; the template escapes them for HTML).
        let kept = [("q", filter.text), ("kind", filter.kind ?? ""), ("provider", filter.provider ?? ""), ("disabled", parameter("disabled"))]
            .filter { !$0.1.isEmpty }
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        let query = kept.map { "\($0.0)=\($0.1.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")&" }.joined()
        let kinds = Set(UserKind.allCases.map(\.rawValue)).subtracting([UserKind.guest.rawValue]).union(filter.kind.map { [$0] } ?? []).sorted()
        let providers = Set(try await self.console.providers()).union(filter.provider.map { [$0] } ?? []).sorted()
        var values: [String: Any] = [
            "q": filter.text, "query": query, "filtered": !kept.isEmpty,
            "kinds": kinds.map { ["value": $0, "selected": $0 == filter.kind] },
            "providers": providers.map { ["value": $0, "selected": $0 == filter.provider] },
            "enabled_only": filter.disabled == false, "disabled_only": filter.disabled == true,
            "users": users.map { user -> [String: Any] in
                [
                    "id": user.id, "kind": user.kind, "created": Self.format(user.createdAt), "email": user.email ?? "—",
                    "providers": user.providers.isEmpty ? "—" : user.providers.joined(separator: ", "),
                    "devices": Self.count(user.devices, "device"), "last_seen": user.lastSeenAt.map(Self.format) ?? "never",
                    "disabled": user.disabledAt != nil,
                ]
            },
        ]
        if page > 1 { values["previous"] = String(page - 1) }
        if more { values["next"] = String(page + 1) }
        return self.render("users", title: "Users", session: session, nav: "users", values, flash: Self.flash(request))
    }

    private func user(_ id: String, _ session: AdminSession, flash: Flash?, status: HTTPResponse.Status = .ok) async throws -> Response {
        let detail = try await self.console.userDetail(id)
        let now = self.console.now()
        var values: [String: Any] = [
            "id": id, "user": id, "kind": detail.user.kind.rawValue, "created": Self.format(detail.user.createdAt),
            "devices": detail.devices.map {
                [
                    "id": $0.id, "created": Self.format($0.createdAt), "last_seen": $0.lastSeenAt.map(Self.format) ?? "—",
                    "key": $0.keyThumbprint == nil ? "—" : "bound", "attested": detail.attested.contains($0.id) ? "yes" : "no",
                ]
            },
            "sessions": detail.sessions.map { row -> [String: Any] in
                var item: [String: Any] = [
                    "id": row.id, "short": String(row.id.prefix(8)), "created": Self.format(row.createdAt),
                    "last_refresh": row.lastRefreshAt.map(Self.format) ?? "never", "live": row.revokedAt == nil,
                    "reason": row.revokedReason ?? "revoked", "method": row.method ?? "—",
                    "last_used": (row.lastUsedAt ?? row.lastRefreshAt ?? row.createdAt).consoleDay,
                ]
                if let device = row.deviceID { item["device"] = device }
                return item
            },
            "identities": detail.identities.map { ["provider": $0.provider, "subject": $0.subject, "created": Self.format($0.createdAt)] },
            "codes": detail.codes.map { Self.codeItem($0, now: now) },
        ]
        let state = detail.budget
        values["limit"] = Self.number(state.limit)
        values["used"] = Self.number(state.used)
        values["remaining"] = Self.number(state.remaining)
        values["period"] = state.period
        if let account = detail.account {
            values["email"] = ["address": account.email, "state": account.verifiedAt.map { "verified \(Self.format($0))" } ?? "not verified"]
        }
        values["factors"] = detail.factors.map {
            ["type": $0.type.rawValue, "state": $0.confirmed ? "confirmed" : "not confirmed", "created": Self.format($0.createdAt)]
        }
        values["has_factors"] = !detail.factors.isEmpty
        if let disabledAt = detail.disabledAt { values["disabled"] = Self.format(disabledAt) }
        values["unverified"] = detail.account.map { $0.verifiedAt == nil } ?? false
        values["has_email"] = detail.account != nil
        values["device_count"] = Self.count(detail.devices.count, "device")
        values["live_count"] = Self.count(detail.sessions.filter { $0.revokedAt == nil }.count, "live session")
        values["events"] = detail.events.map {
            ["at": Self.format($0.at), "actor": $0.actor, "action": $0.action, "details": $0.details ?? ""]
        }
        values["passkeys"] = detail.passkeys.map {
            [
                "id": $0.id, "name": $0.name, "created": Self.format($0.createdAt), "last_used": $0.lastUsedAt.map(Self.format) ?? "never",
                "backed_up": $0.backedUp ? "yes" : "no",
            ]
        }
        return self.render("user", title: "User \(id)", session: session, nav: "users", values, flash: flash, status: status)
    }

    private func confirmDelete(_ id: String, _ session: AdminSession) async throws -> Response {
        let summary = try await self.console.deletionSummary(id)
        return self.render(
            "confirm-delete", title: "Delete user", session: session, nav: "users",
            [
                "id": id, "devices": Self.count(summary.devices, "device"), "live": Self.count(summary.liveSessions, "live session"),
                "identities": Self.count(summary.identities, "identity", plural: "identities"),
                "codes": Self.count(summary.codes, "access code"),
            ])
    }

    private func codes(_ session: AdminSession, flash: Flash?) async throws -> Response {
        let now = self.console.now()
        let codes = try await self.console.accessCodeList().sorted { $0.createdAt > $1.createdAt }.prefix(500).map { code -> [String: Any] in
            var item = Self.codeItem(code, now: now)
            item["user"] = code.userID
            item["user_short"] = String(code.userID.prefix(8))
            item["created"] = Self.format(code.createdAt)
            return item
        }
        return self.render("codes", title: "Access codes", session: session, nav: "codes", ["codes": Array(codes)], flash: flash)
    }

    private func keys(_ session: AdminSession, flash: Flash?) async throws -> Response {
        let now = self.console.now()
        let keys = try await self.console.signingKeys().sorted { $0.createdAt > $1.createdAt }.map { record in
            [
                "kid": record.kid, "algorithm": record.algorithm, "created": Self.format(record.createdAt),
                "status": record.signs(at: now) ? "active (signing)" : record.status(at: now),
            ]
        }
        return self.render("keys", title: "Signing keys", session: session, nav: "keys", ["keys": keys], flash: flash)
    }

    private func audit(_ request: Request, _ session: AdminSession) async throws -> Response {
        let parameters = request.uri.queryParameters
        let action = String((parameters.get("action") ?? "").prefix(100)).trimmingCharacters(in: .whitespaces)
        let text = String((parameters.get("q") ?? "").prefix(200)).trimmingCharacters(in: .whitespaces)
        let before = parameters.get("before").flatMap { Int($0) }
        let events = try await self.console.auditEvents(
            AuditQuery(action: action.isEmpty ? nil : action, text: text.isEmpty ? nil : text, before: before, limit: 101))
        var values: [String: Any] = [
            "action": action, "q": text, "filtered": !action.isEmpty || !text.isEmpty,
            "events": events.prefix(100).map {
                [
                    "at": Self.format($0.at), "actor": $0.actor, "action": $0.action, "target": $0.target, "source": $0.source,
                    "details": $0.details ?? "",
                ]
            },
        ]
        if events.count > 100, let last = events.prefix(100).last { values["older"] = String(last.id) }
        return self.render("audit", title: "Audit log", session: session, nav: "audit", values)
    }

    // MARK: Rendering

    struct Flash {
        var kind: String
        var text: String
        static func ok(_ text: String) -> Flash { Flash(kind: "ok", text: text) }
        static func error(_ text: String) -> Flash { Flash(kind: "error", text: text) }
    }

    /// The message of a finished action (`?done=`): only these fixed texts, so a link cannot put words on the page.
    static func flash(_ request: Request) -> Flash? {
        let messages = [
            "session-revoked": "The session is revoked: its tokens stop working at once.", "session-ended": "That session had already ended.",
            "sessions-revoked": "Every session of the user is revoked.", "budget-set": "The budget limit is set.",
            "code-revoked": "The access code is revoked.", "key-rotated": "A new signing key signs from now on.",
            "user-deleted": "The user is deleted.", "second-factors-reset": "The user's second factors and recovery codes are removed.",
            "recovery-code-used": "You signed in with a recovery code; it cannot be used again.",
            "passkey-removed": "The passkey is removed: it signs in no more. The user's sessions are kept.",
        ]
        return request.uri.queryParameters.get("done").flatMap { messages[$0] ?? Self.supportMessages[$0] ?? Self.accountMessages[$0] }.map(Flash.ok)
    }

    func render(
        _ template: String, title: String, session: AdminSession?, nav: String? = nil, _ values: [String: Any], flash: Flash? = nil,
        status: HTTPResponse.Status = .ok
    ) -> Response {
        Self.render(template, title: title, session: session, nav: nav, values, flash: flash, status: status)
    }

    /// A console page: `template` inside the layout. The role's abilities are in every template's values (`can_support`,
    /// `can_own`), so a page shows only the buttons the admin may use (the routes refuse the others anyway).
    static func render(
        _ template: String, title: String, session: AdminSession?, nav: String? = nil, _ values: [String: Any], flash: Flash? = nil,
        status: HTTPResponse.Status = .ok
    ) -> Response {
        var values = values
        if let session {
            values["csrf"] = session.csrf
            values["can_support"] = session.role.includes(.support)
            values["can_own"] = session.role.includes(.owner)
        }
        let body = AdminTemplates.library.render(values, withTemplate: template) ?? ""
        var layout: [String: Any] = ["title": title, "body": body]
        if let session {
            var admin: [String: Any] = [
                "email": session.email, "csrf": session.csrf, "signed_in": session.stage == .signedIn, "role": session.role.rawValue,
            ]
            if let nav { admin["nav_" + nav] = true }
            layout["admin"] = admin
        }
        if let flash { layout["flash"] = ["kind": flash.kind, "text": flash.text] }
        let html = AdminTemplates.library.render(layout, withTemplate: "layout") ?? ""
        return Response(
            status: status, headers: [.contentType: "text/html; charset=utf-8"], body: ResponseBody(byteBuffer: ByteBuffer(string: html)))
    }

    func message(_ heading: String, _ text: String, status: HTTPResponse.Status, session: AdminSession? = nil) -> Response {
        Self.message(heading, text, status: status, session: session)
    }

    static func message(_ heading: String, _ text: String, status: HTTPResponse.Status, session: AdminSession? = nil) -> Response {
        let link: [String: Any] =
            session == nil ? ["href": "/admin/login", "label": "Sign in"] : ["href": "/admin", "label": "Back to the overview"]
        return Self.render("message", title: heading, session: session, ["heading": heading, "text": text, "link": link], status: status)
    }

    /// The answer to a signed-in admin whose role does not reach what they asked for: 403, nothing done.
    static func notAllowed(_ session: AdminSession, needs role: AdminRole) -> Response {
        Self.message(
            "Not allowed",
            "Your console role is \(session.role.rawValue); this needs \(role.rawValue). Nothing was done. An owner can change roles "
                + "(Console accounts, or latchkey admin create --role).",
            status: .forbidden, session: session)
    }

    static func codeItem(_ code: AccessCodeRecord, now: Date) -> [String: Any] {
        let status = code.status(at: now)
        return [
            "id": code.id, "short": String(code.id.prefix(8)), "note": code.note ?? "", "expires": Self.format(code.expiresAt), "status": status,
            "active": status == "active", "user": code.userID,
        ]
    }

    static func format(_ date: Date) -> String { date.consoleText }

    static func number(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }

    /// `30d`, `12h`, `90m`, `45s` or seconds, up to a year; nil otherwise.
    static func duration(_ text: String) -> TimeInterval? {
        DurationText.seconds(text).flatMap { $0 <= 366 * 86_400 ? $0 : nil }
    }

    /// A refusal as the console shows it: the status the API would answer (``APIError``'s one mapping), and the
    /// service's message, worded for support staff where the console's situation says more (`confirming`: the
    /// credential was the admin's password entered again before an action).
    static func describe(_ error: ServiceError, confirming: Bool = false) -> (HTTPResponse.Status, String) {
        let text =
            switch error.kind {
            case .invalidCredentials:
                confirming ? "That is not your password: nothing was done. Go back and enter it again." : "The email or password is not right."
            case .tooManyAttempts: "Too many failed sign-ins; try again in \(error.retryAfter ?? 1) seconds."
            case .invalidCode: "This setup link is expired or was already used. Ask for a new one (latchkey admin create)."
            case .busy: "The server is busy; try again in a moment."
            default: error.message
            }
        return (APIError(error).status, text)
    }

    // MARK: HTTP helpers

    private func cookie(_ name: String, _ value: String, maxAge: Int? = nil) -> Cookie {
        Cookie(name: name, value: value, maxAge: maxAge, path: "/admin", secure: self.secureCookies, httpOnly: true, sameSite: .strict)
    }

    static func uuid(_ context: AdminRequestContext, _ name: String) throws -> String {
        guard let text = context.parameters.get(name), let uuid = UUID(uuidString: text) else { throw AdminPageError.notFound }
        return uuid.uuidString.lowercased()
    }

    static func redirect(_ location: String) -> Response {
        Response(status: .seeOther, headers: [.location: location])
    }

    static func forbidden() -> Response {
        Response(
            status: .forbidden, headers: [.contentType: "text/plain; charset=utf-8"],
            body: ResponseBody(
                byteBuffer: ByteBuffer(string: "Forbidden: the form is stale or was not sent from this console. Reload the page and try again.\n")))
    }

    static func asset(_ text: String, type: String) -> Response {
        Response(
            status: .ok, headers: [.contentType: type, .cacheControl: "public, max-age=3600"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
    }
}

enum AdminPageError: Error {
    case notFound
}

/// The console's security headers on every answer under `/admin`.
struct AdminHeadersMiddleware: RouterMiddleware {
    typealias Context = LatchkeyRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response = try await next(request, context)
        Self.secure(&response)
        return response
    }

    static func secure(_ response: inout Response) {
        response.headers[.contentSecurityPolicy] = "default-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'"
        response.headers[HTTPField.Name("X-Frame-Options")!] = "DENY"
        response.headers[HTTPField.Name("X-Content-Type-Options")!] = "nosniff"
        response.headers[HTTPField.Name("Referrer-Policy")!] = "same-origin"
        if response.headers[.cacheControl] == nil { response.headers[.cacheControl] = "no-store" }
    }
}
