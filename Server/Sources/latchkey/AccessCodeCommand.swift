import ArgumentParser
import Foundation
import LatchkeyServer

struct AccessCodeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "access-code", abstract: "Issue, list and revoke access codes.", subcommands: [Issue.self, List.self, Revoke.self])

    struct Issue: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Issue an access code for an existing user; prints only the code.")

        @OptionGroup var options: DatabaseOptions

        @Option(help: "The user's UUID (for a device user, the device UUID).")
        var userID: String

        @Option(help: "Lifetime: a number of seconds or a duration such as 90m, 12h, 30d (default 30d).")
        var expiresIn: String?

        @Option(help: "A note for support staff, shown by `access-code list`.")
        var note: String?

        func run() async throws {
            guard let userID = UUID(uuidString: self.userID)?.uuidString.lowercased() else {
                throw ValidationError("--user-id must be a UUID.")
            }
            let lifetime = try self.expiresIn.map(parseDuration)
            let issued = try await withAudit(
                self.options, AuditAction.accessCodeIssue, { ("user \(userID)", "code \($0.record.id) expires \($0.record.expiresAt.iso8601)") }
            ) { services in
                try await services.accessCodes.issue(userID: userID, expiresIn: lifetime, note: self.note)
            }
            print(issued.code)
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List access codes (IDs are their jti).")

        @OptionGroup var options: DatabaseOptions

        @Flag(help: "Print JSON.") var json = false

        func run() async throws {
            let (codes, now) = try await withServices(self.options) { services in
                (try await services.accessCodes.list(), services.clock.now())
            }
            let rows = codes.map { code in
                [code.id, code.userID, code.createdAt.iso8601, code.expiresAt.iso8601, code.status(at: now), code.note ?? ""]
            }
            try printRows(["ID", "USER", "CREATED", "EXPIRES", "STATUS", "NOTE"], rows, json: self.json)
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Revoke an access code by its ID; it stops working at once.")

        @OptionGroup var options: DatabaseOptions

        @Argument(help: "The code's ID (its jti), as `access-code list` shows.")
        var id: String

        func run() async throws {
            typealias Revoked = (code: AccessCodeRecord, revokedSessions: Int, account: EmailAccountRecord?)
            let revoked: Revoked = try await withAudit(
                self.options, AuditAction.accessCodeRevoke,
                { (revoked: Revoked) in
                    ("code \(revoked.code.id)", "user \(revoked.code.userID), \(counted(revoked.revokedSessions, "session")) ended")
                }
            ) { services in
                let (code, sessions) = try await services.accessCodes.revoke(id: self.id.lowercased())
                return (code, sessions, try await services.accounts.account(userID: code.userID))
            }
            let record = revoked.code
            print(
                "revoked access code \(record.id) for user \(record.userID) (\(counted(revoked.revokedSessions, "session")) exchanged from it ended)")
            // A session exchanged from a code can add no way to sign in; an address added since the code was issued is
            // listed anyway, so support can tell whether its holder could have (before that rule, or through another session).
            if let account = revoked.account, account.createdAt >= record.createdAt {
                let state = account.verifiedAt == nil ? "not verified" : "verified"
                print(
                    "note: the user got the email address \(account.email) (\(state)) on \(account.createdAt.iso8601), after this code was issued; "
                        + "if the code's holder added it, remove it with: latchkey users unset-email \(record.userID)")
            }
        }
    }
}

/// Parses "3600", "90s", "90m", "12h", "30d": a lifetime of at most a year, as the admin console allows (`1e30d` would
/// overflow the token's `exp`).
func parseDuration(_ text: String) throws -> TimeInterval {
    guard let seconds = DurationText.seconds(text) else {
        throw ValidationError("'\(text)' is not a duration: use seconds or a number with s, m, h or d (e.g. 30d).")
    }
    guard seconds <= 366 * 86_400 else { throw ValidationError("'\(text)' is too long: a lifetime is at most 366d.") }
    return seconds
}

extension Date {
    var iso8601: String { ISO8601DateFormatter().string(from: self) }
}
