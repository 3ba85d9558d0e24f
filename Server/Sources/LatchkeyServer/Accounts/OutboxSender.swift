import Foundation
import LatchkeySMTP
import Logging
import ServiceLifecycle
import Synchronization

/// A mail's content as sealed in the outbox.
struct OutboxMessage: Codable, Sendable {
    let subject: String
    let text: String
    let html: String
}

/// Delivers the outbox: claims due mails, sends each through the SMTP relay, marks it sent, or schedules a retry with
/// exponential backoff (`email.retry-interval`, doubled per attempt up to an hour) until `email.max-attempts`; a
/// relay's permanent refusal (5xx) fails the mail at once. Several processes on one database never take the same
/// mail: a claim is a lease longer than a delivery may take. Runs beside the server; woken when a mail is queued,
/// otherwise every `email.poll-interval` seconds of the injected clock (so a retry falls due, in tests, when the test
/// moves the clock past it).
package final class OutboxSender: Service, Sendable {
    let store: any OutboxStore
    let client: SMTPClient
    let from: MailAddress
    let masterKey: MasterKey
    let configuration: EmailConfiguration
    let clock: any WallClock
    let logger: Logger
    private let wakeUps: AsyncStream<Void>
    private let wakeUp: AsyncStream<Void>.Continuation
    /// Set at graceful shutdown: no further mail is claimed.
    private let stopping = Atomic<Bool>(false)
    /// Set by ``open()`` once the schema is migrated: before that the outbox table may not exist yet (the sender starts
    /// with the server's other services, while the server prepares).
    private let opened = Atomic<Bool>(false)

    init(
        store: any OutboxStore, client: SMTPClient, from: MailAddress, masterKey: MasterKey, configuration: EmailConfiguration,
        clock: any WallClock, logger: Logger
    ) {
        self.store = store
        self.client = client
        self.from = from
        self.masterKey = masterKey
        self.configuration = configuration
        self.clock = clock
        self.logger = logger
        (self.wakeUps, self.wakeUp) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    /// Asks the sender to look at the outbox now (a mail was queued).
    func wake() { self.wakeUp.yield() }

    /// Lets the sender read the outbox (the services are prepared) and wakes it.
    func open() {
        self.opened.store(true, ordering: .releasing)
        self.wakeUp.yield()
    }

    /// Runs until graceful shutdown, then returns without an error once the mail being delivered is sent and recorded
    /// (no further mail is started), so a restart never sends a mail twice. Bounded by `smtp.timeout`.
    package func run() async throws {
        let wakeUps = self.wakeUps
        let interval = self.configuration.pollInterval
        await withDiscardingTaskGroup { group in
            // A ticker turns the poll interval into wake-ups, so the loop below waits on one stream.
            group.addTask { [wakeUp = self.wakeUp, clock = self.clock] in
                while !Task.isCancelled {
                    do { try await clock.sleep(for: interval) } catch { return }
                    wakeUp.yield()
                }
            }
            await withGracefulShutdownHandler {
                await self.deliverDue()
                for await _ in wakeUps where !self.stopping.load(ordering: .acquiring) { await self.deliverDue() }
            } onGracefulShutdown: {
                self.stopping.store(true, ordering: .releasing)
                self.wakeUp.finish()
            }
            group.cancelAll()
        }
    }

    /// Delivers every mail due now (nothing before ``open()``); returns how many were sent.
    @discardableResult
    package func deliverDue() async -> Int {
        var sent = 0
        guard self.opened.load(ordering: .acquiring) else { return 0 }
        while !Task.isCancelled && !self.stopping.load(ordering: .acquiring) {
            let batch: [OutboxEntry]
            do {
                batch = try await self.store.claimDueMails(at: self.clock.now(), limit: 10, lease: self.configuration.smtpTimeout + 60)
            } catch {
                self.logger.warning("reading the outbox failed", metadata: ["error": "\(String(reflecting: error))"])
                return sent
            }
            if batch.isEmpty { return sent }
            for entry in batch {
                // Claimed but not started at shutdown: its lease ends and another process (or the next start) sends it.
                if self.stopping.load(ordering: .acquiring) { break }
                if await self.deliver(entry) { sent += 1 }
            }
        }
        return sent
    }

    /// Sends one claimed mail and records the outcome; whether it was sent.
    private func deliver(_ entry: OutboxEntry) async -> Bool {
        let metadata: Logger.Metadata = ["mail": "\(entry.id)", "purpose": "\(entry.purpose)", "attempt": "\(entry.attempts)"]
        do {
            guard let sealed = entry.sealedMessage else { throw OutboxFailure(description: "the message is gone", permanent: true) }
            let message: OutboxMessage
            do {
                message = try JSONDecoder().decode(
                    OutboxMessage.self, from: try self.masterKey.open(sealed, context: Self.sealContext(entry.messageID)))
            } catch {
                throw OutboxFailure(description: "the sealed message cannot be opened (another master key?)", permanent: true)
            }
            let mail = try MailMessage(
                from: self.from, to: [try MailAddress(entry.recipient)], subject: message.subject, textBody: message.text, htmlBody: message.html,
                date: entry.createdAt, messageID: entry.messageID, extraHeaders: [try MailHeader("Auto-Submitted", "auto-generated")])
            try await self.client.send(mail)
            try await self.store.markSent(id: entry.id, at: self.clock.now())
            self.logger.info("mail sent", metadata: metadata)
            return true
        } catch {
            let (description, permanent) = Self.describe(error)
            let giveUp = permanent || entry.attempts >= self.configuration.maxAttempts
            let delay = min(3600, self.configuration.retryInterval * pow(2, Double(max(0, entry.attempts - 1))))
            let retryAt = giveUp ? nil : self.clock.now().addingTimeInterval(delay)
            var details = metadata
            details["error"] = "\(description)"
            details["retry_in"] = "\(giveUp ? "never" : "\(Int(delay))s")"
            self.logger.warning(giveUp ? "mail delivery failed for good" : "mail delivery failed; will retry", metadata: details)
            do { try await self.store.markFailed(id: entry.id, error: description, retryAt: retryAt, at: self.clock.now()) } catch {
                self.logger.warning("recording a mail's failure failed", metadata: ["error": "\(error)"])
            }
            return false
        }
    }

    /// A failure's description (the SMTP client's never holds credentials or the message) and whether retrying is useless.
    static func describe(_ error: any Error) -> (String, Bool) {
        switch error {
        case let error as SMTPError: ("\(error)", error.kind == .permanent)
        case let error as OutboxFailure: (error.description, error.permanent)
        case let error as MailMessageError: ("the message cannot be written: \(error)", true)
        default: ("\(type(of: error))", false)
        }
    }

    /// What the seal of a mail's message authenticates: its message ID, so a sealed message cannot be moved to another row.
    static func sealContext(_ messageID: String) -> String { "outbox " + messageID }

    struct OutboxFailure: Error, CustomStringConvertible {
        let description: String
        let permanent: Bool
    }
}
