import ArgumentParser
import Foundation
import LatchkeyServer

/// `latchkey outbox list|retry`: the mails Latchkey queued (verification and reset codes), for support.
struct OutboxCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "outbox", abstract: "List queued mails and retry failed ones.", subcommands: [List.self, Retry.self])

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List mails, newest first: recipient, purpose, state, attempts, last error (never their content).")

        @OptionGroup var options: DatabaseOptions

        @Option(help: "At most this many mails.")
        var limit = 50

        @Flag(help: "Only mails not sent yet (pending or failed).")
        var pending = false

        @Flag(help: "Print JSON.") var json = false

        func run() async throws {
            let mails = try await withServices(self.options) { services in
                try await services.store.outbox(limit: self.limit, pendingOnly: self.pending)
            }
            let rows = mails.map { mail in
                [
                    String(mail.id), mail.recipient, mail.purpose, mail.state, String(mail.attempts), mail.createdAt.iso8601,
                    mail.state == "pending" ? mail.nextAttemptAt.iso8601 : "-", mail.lastError ?? "-",
                ]
            }
            try printRows(["ID", "RECIPIENT", "PURPOSE", "STATE", "ATTEMPTS", "CREATED", "NEXT ATTEMPT", "LAST ERROR"], rows, json: self.json)
        }
    }

    struct Retry: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make failed mails (or the one with --id) due now with fresh attempts; a running server sends them at its next scan.")

        @OptionGroup var options: DatabaseOptions

        @Option(help: "Only this mail (pending or failed).")
        var id: Int?

        func run() async throws {
            let count = try await withAudit(
                self.options, AuditAction.outboxRetry, { [id = self.id] in (id.map { "mail \($0)" } ?? "failed mails", "\($0) mail(s) due now") }
            ) { services in
                try await services.store.retryMails(id: self.id, at: services.clock.now())
            }
            print("\(count) mail(s) due now")
        }
    }
}
