import ArgumentParser
import Foundation
import LatchkeyAPI
import LatchkeyServer

struct UsersCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "users", abstract: "List, show, delete, disable and enable users; end their sessions, unlink identities, free deleted IDs.",
        subcommands: [
            List.self, Show.self, Delete.self, Disable.self, Enable.self, Budget.self, RevokeSessions.self, Unlink.self, FreeID.self,
            VerifyEmail.self, UnsetEmail.self, SetPassword.self, MFAReset.self,
        ])

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List users, oldest first.")

        @OptionGroup var options: DatabaseOptions

        @Option(help: "At most this many users.")
        var limit = 100

        @Option(help: "Skip this many users.")
        var offset = 0

        @Flag(help: "Print JSON.") var json = false

        func run() async throws {
            let users = try await withServices(self.options) { services in
                try await services.users.users(limit: self.limit, offset: self.offset)
            }
            try printRows(["ID", "KIND", "CREATED"], users.map { [$0.id, $0.kind.rawValue, $0.createdAt.iso8601] }, json: self.json)
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show one user, their devices and their passkeys.")

        @OptionGroup var options: DatabaseOptions

        @Argument(help: "The user's UUID.")
        var id: String

        @Flag(help: "Print JSON.") var json = false

        func run() async throws {
            let id = try canonical(self.id)
            let (user, devices, budget, account, passkeys, disabledAt) = try await withServices(self.options) { services in
                guard let user = try await services.users.user(id: id) else { throw ServiceError.notFound("No user with ID \(id).") }
                return (
                    user, try await services.users.devices(ofUser: id), try await services.budgets.budget(ofUser: id),
                    try await services.accounts.account(userID: id), try await services.store.passkeys(ofUser: id),
                    try await services.store.disabledAt(userID: id)
                )
            }
            if self.json {
                return try printJSON(
                    UserShown(
                        id: user.id, kind: user.kind.rawValue, createdAt: user.createdAt, email: account?.email, emailVerifiedAt: account?.verifiedAt,
                        disabledAt: disabledAt, budget: budget,
                        devices: devices.map { .init(id: $0.id, createdAt: $0.createdAt) },
                        passkeys: passkeys.map {
                            .init(id: $0.id, name: $0.name, createdAt: $0.createdAt, lastUsedAt: $0.lastUsedAt, backedUp: $0.backedUp)
                        }))
            }
            print("id: \(user.id)\nkind: \(user.kind.rawValue)\ncreated: \(user.createdAt.iso8601)")
            print("disabled: \(disabledAt.map { "since \($0.iso8601)" } ?? "no")")
            if let account {
                print("email: \(account.email) (\(account.verifiedAt.map { "verified \($0.iso8601)" } ?? "not verified"))")
            } else {
                print("email: none")
            }
            print("budget: \(budget.used) used of \(budget.limit) per \(budget.period), \(budget.remaining) remaining")
            print("devices: \(devices.count)")
            for device in devices { print("  \(device.id) registered \(device.createdAt.iso8601)") }
            print("passkeys: \(passkeys.count)")
            for passkey in passkeys {
                print(
                    "  \(passkey.id) \"\(passkey.name)\" created \(passkey.createdAt.iso8601), last used \(passkey.lastUsedAt?.iso8601 ?? "never"), "
                        + "backed up \(passkey.backedUp ? "yes" : "no")")
            }
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Delete a user with their devices, sessions and access codes; their tokens stop working.",
            discussion: "Apple refresh tokens of the user are revoked at Apple first; if Apple does not confirm, nothing is deleted.")

        @OptionGroup var options: DatabaseOptions

        @Argument(help: "The user's UUID.")
        var id: String

        @OptionGroup var confirmation: Confirmation

        func run() async throws {
            let id = try canonical(self.id)
            try self.confirmation.confirm("delete user \(id) with their devices, sessions and access codes")
            let (deleted, apple) = try await withAudit(
                self.options, AuditAction.userDelete,
                {
                    (
                        "user \(id)",
                        "\(counted($0.0.sessionIDs.count, "session")), \(counted($0.0.accessCodeIDs.count, "access code")), \(counted($0.1, "Apple token")) revoked"
                    )
                }
            ) { services in try await services.users.delete(userID: id) }
            print(
                "deleted user \(deleted.userID) (\(counted(deleted.sessionIDs.count, "session")), \(counted(deleted.accessCodeIDs.count, "access code"))"
                    + (apple > 0 ? ", \(apple) Apple tokens revoked)" : ")"))
        }
    }
}

/// `users show --json`.
struct UserShown: Encodable {
    struct Device: Encodable {
        var id: String
        var createdAt: Date
        enum CodingKeys: String, CodingKey {
            case id
            case createdAt = "created_at"
        }
    }
    struct Passkey: Encodable {
        var id: String
        var name: String
        var createdAt: Date
        var lastUsedAt: Date?
        var backedUp: Bool
        enum CodingKeys: String, CodingKey {
            case id, name
            case createdAt = "created_at"
            case lastUsedAt = "last_used_at"
            case backedUp = "backed_up"
        }
    }
    var id: String
    var kind: String
    var createdAt: Date
    var email: String?
    var emailVerifiedAt: Date?
    var disabledAt: Date?
    var budget: UserProfile.Budget
    var devices: [Device]
    var passkeys: [Passkey]
    enum CodingKeys: String, CodingKey {
        case id, kind, email, budget, devices, passkeys
        case createdAt = "created_at"
        case emailVerifiedAt = "email_verified_at"
        case disabledAt = "disabled_at"
    }
}

extension UsersCommand {
    struct Budget: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show a user's budget, or set its limit with --set.")

        @OptionGroup var options: DatabaseOptions

        @Argument(help: "The user's UUID.")
        var id: String

        @Option(help: "The new limit for the rolling period, in the app's units.")
        var set: Double?

        @Flag(help: "Print JSON.") var json = false

        func run() async throws {
            let id = try canonical(self.id)
            if let limit = self.set, !(limit >= 0 && limit.isFinite) { throw ValidationError("--set must be a number ≥ 0.") }
            let budget =
                if let limit = self.set {
                    try await withAudit(self.options, AuditAction.userBudgetSet, { _ in ("user \(id)", "limit \(limit)") }) { services in
                        try await services.budgets.setLimit(ofUser: id, to: limit)
                    }
                } else {
                    try await withServices(self.options) { services in
                        guard try await services.users.user(id: id) != nil else { throw ServiceError.notFound("No user with ID \(id).") }
                        return try await services.budgets.budget(ofUser: id)
                    }
                }
            if self.json { return try printJSON(budget) }
            print("limit: \(budget.limit)\nused: \(budget.used)\nremaining: \(budget.remaining)\nperiod: \(budget.period)")
        }
    }
}

extension UsersCommand {
    struct RevokeSessions: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "revoke-sessions",
            abstract: "End every session of a user at once (a stolen phone): their refresh and access tokens stop working.",
            discussion: "Running servers refuse the tokens within revocations.poll-interval (at once on PostgreSQL).")

        @OptionGroup var options: DatabaseOptions

        @Argument(help: "The user's UUID.")
        var id: String

        func run() async throws {
            let id = try canonical(self.id)
            let revoked = try await withAudit(
                self.options, AuditAction.userSessionsRevoke, { (revoked: Int) in ("user \(id)", "\(counted(revoked, "session")) ended") }
            ) {
                services in
                guard try await services.users.user(id: id) != nil else { throw ServiceError.notFound("No user with ID \(id).") }
                return try await services.sessions.revokeSessions(ofUser: id)
            }
            print("revoked \(counted(revoked, "session")) of user \(id)")
        }
    }

    struct Unlink: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Unlink a user's identities at a provider (apple, or a configured provider's name).",
            discussion: "Apple tokens of the user are revoked at Apple first. A user created by an identity provider keeps its last identity.")

        @OptionGroup var options: DatabaseOptions

        @Argument(help: "The user's UUID.")
        var id: String

        @Argument(help: "The provider: apple, or a configured provider's name.")
        var provider: String

        func run() async throws {
            let id = try canonical(self.id)
            let unlinked = try await withAudit(
                self.options, AuditAction.userIdentityUnlink, { [provider = self.provider] in ("user \(id)", "\($0) \(provider) identities") }
            ) { services in
                try await services.federation.unlink(provider: self.provider, fromUser: id)
            }
            print("unlinked \(unlinked) \(self.provider) identities from user \(id)")
        }
    }

    struct FreeID: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "free-id",
            abstract: "Let a deleted user's ID be registered again (deleted IDs are retired so nobody takes over what was theirs).")

        @OptionGroup var options: DatabaseOptions

        @Argument(help: "The deleted user's UUID.")
        var id: String

        func run() async throws {
            let id = try canonical(self.id)
            try await withAudit(self.options, AuditAction.userFreeID, { _ in ("user \(id)", nil) }) { services in
                try await services.users.freeDeletedID(id)
            }
            print("the ID \(id) can be registered again")
        }
    }
}

func canonical(_ id: String) throws -> String {
    guard let uuid = UUID(uuidString: id) else { throw ValidationError("'\(id)' is not a UUID.") }
    return uuid.uuidString.lowercased()
}

extension UsersCommand {
    struct VerifyEmail: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "verify-email", abstract: "Mark a user's email address verified (support: the mail never arrived).")

        @OptionGroup var options: DatabaseOptions

        @Argument(help: "The user's UUID.")
        var id: String

        func run() async throws {
            let id = try canonical(self.id)
            try await withAudit(self.options, AuditAction.userEmailVerify, { _ in ("user \(id)", nil) }) { services in
                try await services.accounts.markVerified(userID: id)
            }
            print("verified the email address of user \(id)")
        }
    }

    struct UnsetEmail: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "unset-email", abstract: "Remove a user's email address and password; ends every session of the user.",
            discussion: "For an address someone else attached (a stolen token, say): it no longer signs in. A verified address is mailed a notice.")

        @OptionGroup var options: DatabaseOptions

        @Argument(help: "The user's UUID.")
        var id: String

        func run() async throws {
            let id = try canonical(self.id)
            let removed = try await withAudit(
                self.options, AuditAction.userEmailUnset, { ("user \(id)", "\(counted($0.revokedSessions, "session")) ended") }
            ) {
                services in try await services.accounts.unsetEmail(userID: id)
            }
            print("removed the email address \(removed.email) of user \(id); revoked \(removed.revokedSessions) session(s)")
        }
    }

    struct SetPassword: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set-password",
            abstract: "Set a user's password (prompted, never an argument); ends every session and device credential of the user.",
            discussion: "On a terminal the password is asked twice without echo; otherwise it is the first line of standard input.")

        @OptionGroup var options: DatabaseOptions

        @Argument(help: "The user's UUID.")
        var id: String

        func run() async throws {
            let id = try canonical(self.id)
            let password = try PasswordPrompt.read("New password: ", confirming: true)
            let revoked = try await withAudit(
                self.options, AuditAction.userPasswordSet,
                { ("user \(id)", "\(counted($0.sessions, "session")) ended, \(counted($0.devices, "device")) signed out") }
            ) { services in try await services.accounts.setPassword(userID: id, password: password) }
            print("set the password of user \(id); revoked \(revoked.sessions) session(s) and signed out \(revoked.devices) device(s)")
        }
    }
}

/// Reads a password: from the terminal without echo (asked twice when `confirming`), or the first line of standard input.
enum PasswordPrompt {
    static func read(_ prompt: String, confirming: Bool) throws -> String {
        guard isatty(STDIN_FILENO) == 1 else {
            guard let line = readLine(strippingNewline: true), !line.isEmpty else { throw ValidationError("No password on standard input.") }
            return line
        }
        guard let first = getpass(prompt).map({ String(cString: $0) }), !first.isEmpty else { throw ValidationError("No password given.") }
        if confirming {
            guard let second = getpass("Again: ").map({ String(cString: $0) }), second == first else {
                throw ValidationError("The passwords differ.")
            }
        }
        return first
    }
}

extension UsersCommand {
    struct MFAReset: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "mfa-reset",
            abstract: "Remove a user's second factors and recovery codes (a lost authenticator app); their sessions are kept.",
            discussion: "The user then signs in with one factor and can set up a new authenticator app. Audited (user.mfa.reset).")

        @OptionGroup var options: DatabaseOptions

        @Argument(help: "The user's UUID.")
        var id: String

        func run() async throws {
            let id = try canonical(self.id)
            let removed = try await withAudit(
                self.options, AuditAction.userMFAReset, { (removed: Int) in ("user \(id)", "\(counted(removed, "factor")) removed") }
            ) {
                services in
                guard try await services.users.user(id: id) != nil else { throw ServiceError.notFound("No user with ID \(id).") }
                return try await services.secondFactors.reset(userID: id)
            }
            print("removed \(counted(removed, "second factor")) of user \(id); sessions kept")
        }
    }
}

extension UsersCommand {
    struct Disable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Disable a user: every session ends, and every sign-in and refresh answers 403 user_disabled until enabled.",
            discussion: "Running servers refuse the ended tokens within revocations.poll-interval (at once on PostgreSQL). Audited (user.disable).")

        @OptionGroup var options: DatabaseOptions

        @Argument(help: "The user's UUID.")
        var id: String

        func run() async throws {
            let id = try canonical(self.id)
            let (wasDisabled, revoked) = try await withServices(self.options) { services in
                let wasDisabled = try await services.store.disabledAt(userID: id) != nil
                return (wasDisabled, try await services.backend.disable(userID: id, by: .commandLine()))
            }
            print(wasDisabled ? "user \(id) was disabled already" : "disabled user \(id); revoked \(revoked.count) session(s)")
        }
    }

    struct Enable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Enable a disabled user: they can sign in again (the sessions disabling ended stay ended).",
            discussion: "Audited (user.enable).")

        @OptionGroup var options: DatabaseOptions

        @Argument(help: "The user's UUID.")
        var id: String

        func run() async throws {
            let id = try canonical(self.id)
            let enabled = try await withServices(self.options) { services in try await services.backend.enable(userID: id, by: .commandLine()) }
            print(enabled ? "enabled user \(id)" : "user \(id) was not disabled")
        }
    }
}
