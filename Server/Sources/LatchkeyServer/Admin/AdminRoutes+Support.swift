import Foundation
import Hummingbird

/// Support's day in the console: disabling and enabling a user, the mails of their address (a new verification code, a
/// password reset, marking it verified), and the outbox with a retry for failed mail.
extension AdminRoutes {
    static let outboxPageSize = 50

    func addSupportPages(to pages: RouterGroup<AdminRequestContext>) {
        pages.get("outbox") { request, context in
            try await self.page(request, context) { session in try await self.outbox(request, session) }
        }
    }

    func addSupportActions(to actions: RouterGroup<AdminRequestContext>) {
        actions.post("users/:id/disable") { request, context in
            try await self.action(request, context) { _, _, actor in
                let user = try Self.uuid(context, "id")
                let done = try await self.console.disable(user, by: actor)
                return .redirect("/admin/users/\(user)?done=" + (done ? "user-disabled" : "already-disabled"))
            }
        }
        actions.post("users/:id/enable") { request, context in
            try await self.action(request, context) { _, _, actor in
                let user = try Self.uuid(context, "id")
                let done = try await self.console.enable(user, by: actor)
                return .redirect("/admin/users/\(user)?done=" + (done ? "user-enabled" : "not-disabled"))
            }
        }
        actions.post("users/:id/email/resend-verification") { request, context in
            try await self.action(request, context) { _, _, actor in
                let user = try Self.uuid(context, "id")
                let done = try await self.console.resendVerification(user, by: actor)
                return .redirect("/admin/users/\(user)?done=" + (done ? "verification-sent" : "no-unverified-email"))
            }
        }
        actions.post("users/:id/email/send-reset") { request, context in
            try await self.action(request, context) { _, _, actor in
                let user = try Self.uuid(context, "id")
                let done = try await self.console.sendPasswordReset(user, by: actor)
                return .redirect("/admin/users/\(user)?done=" + (done ? "reset-sent" : "no-resettable-email"))
            }
        }
        actions.post("users/:id/email/mark-verified") { request, context in
            try await self.action(request, context) { _, _, actor in
                let user = try Self.uuid(context, "id")
                try await self.console.markEmailVerified(user, by: actor)
                return .redirect("/admin/users/\(user)?done=email-verified")
            }
        }
        actions.post("outbox/:mail/retry") { request, context in
            try await self.action(request, context) { _, _, actor in
                guard let text = context.parameters.get("mail"), let id = Int(text), id > 0 else { throw AdminPageError.notFound }
                let done = try await self.console.retryMail(id, by: actor)
                return .redirect("/admin/outbox?done=" + (done ? "mail-retried" : "mail-not-failed"))
            }
        }
    }

    /// The fixed messages of support's actions (``flash(_:)``).
    static let supportMessages: [String: String] = [
        "user-disabled": "The user is disabled: every session ended, and sign-ins and refreshes are refused until enabled.",
        "already-disabled": "The user was disabled already.",
        "user-enabled": "The user is enabled: they can sign in again (their ended sessions stay ended).",
        "not-disabled": "The user was not disabled.",
        "verification-sent": "A new verification mail is queued (see the outbox).",
        "no-unverified-email": "The user has no unverified email address: no mail was sent.",
        "reset-sent": "A password reset mail is queued (see the outbox).",
        "no-resettable-email": "The user's address is not verified: no password reset was sent.",
        "email-verified": "The email address is marked verified.",
        "mail-retried": "The mail is pending again: it is sent at the next scan.",
        "mail-not-failed": "Only failed mail can be retried: nothing was changed.",
    ]

    private func outbox(_ request: Request, _ session: AdminSession) async throws -> Response {
        let parameters = request.uri.queryParameters
        let state = parameters.get("state").flatMap { ["pending", "sent", "failed"].contains($0) ? $0 : nil }
        let page = max(1, min(10_000, Int(parameters.get("page") ?? "") ?? 1))
        var mails = try await self.console.outbox(state: state, limit: Self.outboxPageSize + 1, offset: (page - 1) * Self.outboxPageSize)
        let more = mails.count > Self.outboxPageSize
        mails = Array(mails.prefix(Self.outboxPageSize))
        var values: [String: Any] = [
            "state": state ?? "", "filtered": state != nil,
            "states": ["pending", "sent", "failed"].map { ["value": $0, "selected": $0 == state] },
            "mails": mails.map { mail -> [String: Any] in
                [
                    "id": String(mail.id), "recipient": mail.recipient, "purpose": mail.purpose, "state": mail.state,
                    "failed": mail.state == "failed",
                    "attempts": Self.count(mail.attempts, "attempt"), "created": Self.format(mail.createdAt),
                    "last_error": mail.lastError ?? "—",
                ]
            },
        ]
        if page > 1 { values["previous"] = String(page - 1) }
        if more { values["next"] = String(page + 1) }
        return self.render("outbox", title: "Outbox", session: session, nav: "outbox", values, flash: Self.flash(request))
    }

    /// `1 device`, `2 devices`, `0 devices`: a count with its noun, singular only for one.
    static func count(_ number: Int, _ noun: String, plural: String? = nil) -> String {
        "\(number) " + (number == 1 ? noun : plural ?? noun + "s")
    }
}

extension AdminTemplates {
    static let supportTemplates: [String: String] = [
        "outbox": """
        <h1>Outbox</h1>
        <p class="muted">Mail Latchkey queued: verification and reset codes, notices. The messages themselves are never shown.</p>
        <form id="outbox-filter" method="get" action="/admin/outbox" class="inline">
          <label>State <select name="state"><option value="">any</option>
            {{#states}}<option value="{{value}}"{{#selected}} selected{{/selected}}>{{value}}</option>{{/states}}</select></label>
          <button type="submit">Filter</button>{{#filtered}} <a href="/admin/outbox" class="quiet">Clear</a>{{/filtered}}
        </form>
        <div class="scroll"><table id="outbox"><thead><tr><th>Recipient</th><th>Purpose</th><th>State</th><th>Attempts</th><th>Created</th>\
        <th>Last error</th><th></th></tr></thead><tbody>
        {{#mails}}<tr data-mail-id="{{id}}"><td>{{recipient}}</td><td>{{purpose}}</td><td class="state-{{state}}">{{state}}</td>\
        <td>{{attempts}}</td><td>{{created}}</td><td class="error-text">{{last_error}}</td>
          <td>{{#failed}}{{#can_support}}<form class="retry-mail" method="post" action="/admin/outbox/{{id}}/retry">
            <input type="hidden" name="csrf" value="{{csrf}}"><button type="submit" class="small">Retry</button></form>{{/can_support}}{{/failed}}</td></tr>{{/mails}}
        {{^mails}}<tr><td colspan="7" class="muted">No mail.</td></tr>{{/mails}}
        </tbody></table></div>
        <p class="pager">{{#previous}}<a href="/admin/outbox?state={{state}}&amp;page={{previous}}">← Previous</a>{{/previous}}
        {{#next}}<a href="/admin/outbox?state={{state}}&amp;page={{next}}">Next →</a>{{/next}}</p>
        """
    ]
}
