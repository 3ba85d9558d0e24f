import ArgumentParser
import Foundation
import LatchkeyServer

/// `latchkey audit list`: the audit log of support actions (this CLI's and the admin console's).
struct AuditCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "audit", abstract: "The audit log: who did which support action, to what, when and from where.", subcommands: [List.self])

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List audit events, newest first (tab-separated: time, actor, action, target, source, details).")

        @OptionGroup var options: DatabaseOptions

        @Option(help: "Only events since this time: an ISO 8601 time (2026-11-23T10:00:00Z) or an age (90m, 24h, 7d).")
        var since: String?

        @Option(help: "Only this action or the actions under it (e.g. user, user.delete, access_code.issue).")
        var action: String?

        @Option(help: "At most this many events.")
        var limit = 100

        @Flag(help: "Print JSON.") var json = false

        func run() async throws {
            guard self.limit > 0 else { throw ValidationError("--limit must be at least 1.") }
            let events = try await withServices(self.options) { services in
                let since = try self.since.map { try Self.time($0, now: services.clock.now()) }
                return try await services.audit.events(AuditQuery(since: since, action: self.action, limit: self.limit))
            }
            let rows = events.map { [$0.at.iso8601, $0.actor, $0.action, $0.target, $0.source, $0.details ?? ""] }
            try printRows(["TIME", "ACTOR", "ACTION", "TARGET", "SOURCE", "DETAILS"], rows, json: self.json)
        }

        /// An ISO 8601 time, or now less an age (`parseDuration`'s forms).
        static func time(_ text: String, now: Date) throws -> Date {
            if let date = try? Date(text, strategy: .iso8601) { return date }
            if let age = try? parseDuration(text) { return now.addingTimeInterval(-age) }
            throw ValidationError("--since must be an ISO 8601 time (2026-11-23T10:00:00Z) or an age such as 90m, 24h or 7d.")
        }
    }
}
