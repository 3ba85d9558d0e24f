import Foundation
import Hummingbird
import SQLKit

/// The console's own accounts at `/admin/admins`: every role sees who has access and with which role; an owner adds an
/// account (its setup link shown once), changes a role and removes an account, each with their password entered again.
/// The console always keeps an owner: the last one cannot be demoted or removed, and nobody removes their own account
/// here (the command line, `latchkey admin`, can do both: it is the operator's way back in).
extension AdminRoutes {
    func addAccountPages(to pages: RouterGroup<AdminRequestContext>) {
        pages.get("admins") { request, context in
            try await self.page(request, context) { session in try await self.accounts(session, flash: Self.flash(request)) }
        }
    }

    func addAccountActions(to owner: RouterGroup<AdminRequestContext>) {
        owner.post("admins") { request, context in
            try await self.action(request, context) { session, form, actor in
                let email = (form.email ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
                guard let role = AdminRole(rawValue: form.role ?? "") else {
                    return .page(try await self.accounts(session, flash: .error("Choose a role: viewer, support or owner."), status: .badRequest))
                }
                guard let address = try? EmailAddress(parsing: email) else {
                    return .page(try await self.accounts(session, flash: .error("That is not an email address."), status: .badRequest))
                }
                try await self.admin.confirmPassword(form.password ?? "", session: session)
                guard try await self.console.store.adminAccount(emailKey: address.key) == nil else {
                    return .page(
                        try await self.accounts(
                            session,
                            flash: .error(
                                "\(address.address) has a console account already: change its role below, or give it a new setup link with "
                                    + "latchkey admin create."), status: .conflict))
                }
                let (account, token) = try await self.admin.createAccount(email: address.address, role: role)
                try await self.console.audit.record(
                    actor, AuditAction.adminCreate, target: "admin \(account.email)", details: "role \(account.role.rawValue)")
                return .page(
                    self.render(
                        "admin-created", title: "Console account added", session: session, nav: "admins",
                        ["email": account.email, "role": account.role.rawValue, "link": self.console.adminSetupBase + token],
                        flash: .ok("Account added. Copy the setup link now: it is not shown again.")))
            }
        }
        owner.post("admins/:id/role") { request, context in
            try await self.action(request, context) { session, form, actor in
                let id = try Self.uuid(context, "id")
                guard let role = AdminRole(rawValue: form.role ?? "") else {
                    return .page(try await self.accounts(session, flash: .error("Choose a role: viewer, support or owner."), status: .badRequest))
                }
                try await self.admin.confirmPassword(form.password ?? "", session: session)
                switch try await self.console.store.setAdminRole(id: id, to: role) {
                case nil: throw AdminPageError.notFound
                case .refused: return .page(try await self.onlyOwner(session))
                case .changed(let account):
                    let previous = account.role
                    if previous != role {
                        try await self.console.audit.record(
                            actor, AuditAction.adminRoleSet, target: "admin \(account.email)", details: "\(previous.rawValue) → \(role.rawValue)")
                    }
                    return .redirect("/admin/admins?done=" + (previous == role ? "role-unchanged" : "role-set"))
                }
            }
        }
        owner.post("admins/:id/remove") { request, context in
            try await self.action(request, context) { session, form, actor in
                let id = try Self.uuid(context, "id")
                guard id != session.adminID.lowercased() else {
                    return .page(
                        try await self.accounts(
                            session, flash: .error("You cannot remove your own account here; another owner can. Nothing was changed."),
                            status: .conflict))
                }
                try await self.admin.confirmPassword(form.password ?? "", session: session)
                switch try await self.console.store.removeAdminAccount(id: id) {
                case nil: throw AdminPageError.notFound
                case .refused: return .page(try await self.onlyOwner(session))
                case .changed(let account):
                    try await self.console.audit.record(actor, AuditAction.adminRemove, target: "admin \(account.email)")
                    return .redirect("/admin/admins?done=admin-removed")
                }
            }
        }
    }

    /// The answer to a change that would leave the console without an owner: 409, nothing changed.
    private func onlyOwner(_ session: AdminSession) async throws -> Response {
        try await self.accounts(
            session, flash: .error("This is the only owner: make another account an owner first. Nothing was changed."), status: .conflict)
    }

    /// The fixed messages of the accounts page's actions (``flash(_:)``).
    static let accountMessages: [String: String] = [
        "role-set": "The role is changed; it applies from that admin's next page.",
        "role-unchanged": "The account had that role already.",
        "admin-removed": "The account is removed: its sessions ended.",
    ]

    func accounts(_ session: AdminSession, flash: Flash?, status: HTTPResponse.Status = .ok) async throws -> Response {
        let accounts = try await self.console.store.adminAccounts()
        let rows = accounts.map { account -> [String: Any] in
            [
                "id": account.id, "email": account.email, "role": account.role.rawValue,
                "state": account.hasPassword ? "active" : "awaiting setup", "second_factor": account.hasSecondFactor ? "TOTP" : "none",
                "created": Self.format(account.createdAt), "last_sign_in": account.lastLoginAt.map(Self.format) ?? "never",
                "yourself": account.id.lowercased() == session.adminID.lowercased(),
                "roles": AdminRole.allCases.map { ["value": $0.rawValue, "selected": $0 == account.role] },
            ]
        }
        return self.render(
            "admins", title: "Console accounts", session: session, nav: "admins",
            ["accounts": rows, "count": Self.count(accounts.count, "account")], flash: flash, status: status)
    }
}

/// What became of a change to a console account that must leave the console an owner.
enum AdminAccountChange {
    /// Done: the account as it was before (its role the one it had).
    case changed(AdminAccount)
    /// Refused: it would have left no owner.
    case refused
}

extension SQLLatchkeyStore {
    /// Gives the account `id` `role`, unless that takes the role of owner from the last one; nil when there is no such
    /// account. Concurrent changes take turns (two owners demoting each other at once leave one).
    func setAdminRole(id: String, to role: AdminRole) async throws -> AdminAccountChange? {
        try await self.database.transaction { sql -> AdminAccountChange? in
            try await Self.serialize(on: "admin owners", sql)
            guard let row = try await sql.raw("SELECT * FROM admin_accounts WHERE id = \(bind: id)").first() else { return nil }
            let account = try Self.adminAccount(from: row)
            if account.role == .owner, role != .owner, try await Self.owners(sql) <= 1 { return .refused }
            try await sql.raw("UPDATE admin_accounts SET role = \(bind: role.rawValue) WHERE id = \(bind: id)").run()
            return .changed(account)
        }
    }

    /// Removes the account `id` with its sessions, unless it is the last owner; nil when there is no such account.
    func removeAdminAccount(id: String) async throws -> AdminAccountChange? {
        try await self.database.transaction { sql -> AdminAccountChange? in
            try await Self.serialize(on: "admin owners", sql)
            guard let row = try await sql.raw("SELECT * FROM admin_accounts WHERE id = \(bind: id)").first() else { return nil }
            let account = try Self.adminAccount(from: row)
            if account.role == .owner, try await Self.owners(sql) <= 1 { return .refused }
            try await sql.raw("DELETE FROM admin_sessions WHERE admin_id = \(bind: id)").run()
            try await sql.raw("DELETE FROM admin_accounts WHERE id = \(bind: id)").run()
            return .changed(account)
        }
    }

    private static func owners(_ sql: any SQLDatabase) async throws -> Int {
        try await sql.raw("SELECT count(*) AS owners FROM admin_accounts WHERE role = 'owner'").first()?.decode(column: "owners", as: Int.self) ?? 0
    }
}

extension AdminTemplates {
    static let accountTemplates: [String: String] = [
        "admins": """
        <h1>Console accounts</h1>
        <p class="muted">{{count}}. Roles are cumulative: viewer reads every page; support also acts on users and retries mail; \
        owner also manages signing keys, access codes, deleting users and these accounts.</p>
        <div class="scroll"><table id="admins"><thead><tr><th>Email</th><th>Role</th><th>State</th><th>Second factor</th><th>Created</th>\
        <th>Last sign-in</th>{{#can_own}}<th></th>{{/can_own}}</tr></thead><tbody>
        {{#accounts}}<tr data-admin-id="{{id}}"><td>{{email}}{{#yourself}} <span class="muted">(you)</span>{{/yourself}}</td>\
        <td class="admin-role">{{role}}</td><td>{{state}}</td><td>{{second_factor}}</td><td>{{created}}</td><td>{{last_sign_in}}</td>
          {{#can_own}}<td><form class="set-role inline" method="post" action="/admin/admins/{{id}}/role">
            <input type="hidden" name="csrf" value="{{csrf}}">
            <select name="role" aria-label="Role">{{#roles}}<option value="{{value}}"{{#selected}} selected{{/selected}}>{{value}}</option>{{/roles}}</select>
            <input type="password" name="password" autocomplete="current-password" placeholder="Your password" aria-label="Your password" required>
            <button type="submit" class="small">Set role</button></form>
            {{^yourself}}<form class="remove-admin inline" method="post" action="/admin/admins/{{id}}/remove">
            <input type="hidden" name="csrf" value="{{csrf}}">
            <input type="password" name="password" autocomplete="current-password" placeholder="Your password" aria-label="Your password" required>
            <button type="submit" class="danger small">Remove</button></form>{{/yourself}}</td>{{/can_own}}</tr>{{/accounts}}
        </tbody></table></div>
        {{#can_own}}<h2>Add an account</h2>
        <form id="add-admin" method="post" action="/admin/admins" class="inline">
          <input type="hidden" name="csrf" value="{{csrf}}">
          <label>Email <input type="email" name="email" required></label>
          <label>Role <select name="role"><option value="viewer">viewer</option><option value="support" selected>support</option>\
        <option value="owner">owner</option></select></label>
          <label>Your password <input type="password" name="password" autocomplete="current-password" required></label>
          <button type="submit">Add: show a setup link</button></form>{{/can_own}}
        """,
        "admin-created": """
        <h1>Console account added</h1>
        <p><strong>{{email}}</strong> ({{role}}) sets a password with this link. It works once, for 24 hours; send it to them yourself.</p>
        <p><code id="setup-link" class="code">{{link}}</code></p>
        <p><a href="/admin/admins">Back to the console accounts</a></p>
        """,
    ]
}
