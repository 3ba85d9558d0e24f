import ArgumentParser
import Foundation
import LatchkeyServer

/// `latchkey admin create|list|remove|mfa-reset`: the admin console's accounts.
struct AdminCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "admin", abstract: "Admin console accounts (the console is on with admin.enabled).",
        subcommands: [Create.self, List.self, Remove.self, MFAReset.self])

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create an admin account and print its one-time setup link (valid 24 hours).",
            discussion: """
                The link opens a page where the person sets their password, which is hashed as app passwords are. For an \
                existing account, the password is cleared, its sessions end and a new link is printed; its second factor is \
                kept (admin mfa-reset removes it), and so is its role unless --role is given. Roles are cumulative: viewer \
                (reads every page), support (also acts on users: disable, enable, resend the verification mail, password \
                reset, mark verified, sessions, budget, second factors, passkeys; retries failed mail), owner (also signing \
                keys, access codes, deleting users, console accounts). Audited (admin.create; admin.role.set when an account's role changes). \
                The link's address is admin.public-url, else the public URL (or \
                http://HOST:admin.port when the console has a port of its own).
                """)

        @OptionGroup var options: DatabaseOptions

        @Argument(help: "The person's email address (their sign-in name).")
        var email: String

        @Option(help: "viewer, support or owner (a new account: support; an existing one keeps its role without this).")
        var role: AdminRole?

        func run() async throws {
            let (account, link, enabled) = try await withServices(self.options) { services in
                let before = try await services.admin.accounts()
                let (account, token) = try await services.admin.createAccount(email: self.email, role: self.role)
                if let previous = before.first(where: { $0.id == account.id }) {
                    try await services.audit.record(
                        .commandLine(), AuditAction.adminCreate, target: "admin \(account.email)",
                        details: "new setup link, role \(account.role.rawValue)")
                    if previous.role != account.role {
                        try await services.audit.record(
                            .commandLine(), AuditAction.adminRoleSet, target: "admin \(account.email)",
                            details: "\(previous.role.rawValue) → \(account.role.rawValue)")
                    }
                } else {
                    try await services.audit.record(
                        .commandLine(), AuditAction.adminCreate, target: "admin \(account.email)", details: "role \(account.role.rawValue)")
                }
                return (account, services.adminSetupLink(token: token), services.configuration.admin.enabled)
            }
            print(link)
            var note = "admin \(account.email) (\(account.role.rawValue)): the setup link above works once, for 24 hours"
            if !enabled { note += " (admin.enabled is off in this configuration: the server must have it on to serve the console)" }
            FileHandle.standardError.write(Data((note + "\n").utf8))
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List admin accounts.")

        @OptionGroup var options: DatabaseOptions

        @Flag(help: "Print JSON.") var json = false

        func run() async throws {
            let accounts = try await withServices(self.options) { services in try await services.admin.accounts() }
            let rows = accounts.map { account in
                [
                    account.email, account.hasPassword ? "active" : "awaiting setup", account.hasSecondFactor ? "totp" : "none",
                    account.createdAt.iso8601, account.lastLoginAt?.iso8601 ?? "-", account.role.rawValue,
                ]
            }
            try printRows(["EMAIL", "STATE", "SECOND FACTOR", "CREATED", "LAST SIGN-IN", "ROLE"], rows, json: self.json)
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove an admin account; its sessions end at once.")

        @OptionGroup var options: DatabaseOptions

        @Argument(help: "The account's email address.")
        var email: String

        func run() async throws {
            let removed = try await withServices(self.options) { services in
                let removed = try await services.admin.removeAccount(email: self.email)
                if removed { try await services.audit.record(.commandLine(), AuditAction.adminRemove, target: "admin \(self.email)") }
                return removed
            }
            guard removed else {
                printError("no admin account \(self.email)")
                throw LatchkeyExit.notFound
            }
            print("removed admin \(self.email)")
        }
    }

    struct MFAReset: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "mfa-reset",
            abstract: "Remove an admin's second factor and recovery codes (a lost authenticator app); their sessions end.",
            discussion: """
                The admin then signs in with the password only and, while admin.require-mfa is on, is sent to set up a new \
                authenticator app before anything else. Audited (admin.mfa.reset).
                """)

        @OptionGroup var options: DatabaseOptions

        @Argument(help: "The account's email address.")
        var email: String

        func run() async throws {
            let reset = try await withServices(self.options) { services in
                let reset = try await services.admin.resetSecondFactor(email: self.email)
                if reset { try await services.audit.record(.commandLine(), AuditAction.adminMFAReset, target: "admin \(self.email)") }
                return reset
            }
            guard reset else {
                printError("no admin account \(self.email)")
                throw LatchkeyExit.notFound
            }
            print("removed the second factor and recovery codes of admin \(self.email); their sessions ended")
        }
    }
}

extension AdminRole: ExpressibleByArgument {}
