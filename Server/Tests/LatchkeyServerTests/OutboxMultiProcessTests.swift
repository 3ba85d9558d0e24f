import Foundation
import LatchkeyAPI
import LatchkeyServer
import LatchkeyTestSupport
import SQLKit
import Testing

/// Two real `latchkey serve` processes on one PostgreSQL database drain one outbox: each mail goes out exactly once.
@Suite(
    .enabled(if: TestPostgres.isAvailable, TestPostgres.skipReason), .enabled(if: SMTPPeer.isAvailable, SMTPPeer.skipReason),
    .timeLimit(.minutes(3)))
struct OutboxMultiProcessTests {
    /// Forty registrations, half on each process and all at once, queue forty verification mails. Both senders scan
    /// the outbox every 0.1 s and are woken by their own registrations, so they race for the same rows all along. Once
    /// every row is marked sent, both processes are stopped (no send can happen after that), and then the peer must
    /// hold exactly one mail for each address.
    @Test func twoProcessesNeverSendOneMailTwice() async throws {
        let peer = try await SMTPPeer.shared()
        let database = try await TestPostgres.freshDatabaseURL()
        let environment = [
            "LATCHKEY_SMTP_HOST": "127.0.0.1", "LATCHKEY_SMTP_PORT": String(peer.ports.plain), "LATCHKEY_SMTP_TLS": "none",
            "LATCHKEY_EMAIL_FROM": "no-reply@latchkey.test", "LATCHKEY_EMAIL_POLL_INTERVAL": "0.1",
            "LATCHKEY_PASSWORDS_ARGON2_MEMORY": "64", "LATCHKEY_PASSWORDS_ARGON2_ITERATIONS": "1", "LATCHKEY_LIMITS_EMAIL_LIMIT": "0",
        ]
        let a = try await LatchkeyProcess.start(database: database, environment: environment)
        let b: LatchkeyProcess
        do { b = try await LatchkeyProcess.start(database: database, environment: environment) } catch {
            _ = await a.terminate()
            throw error
        }
        let addresses = (0..<40).map { _ in newAddress() }
        do {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (index, email) in addresses.enumerated() {
                    let server = index.isMultiple(of: 2) ? a : b
                    group.addTask {
                        let body = #"{"email":"\#(email)","password":"correct horse battery staple"}"#
                        let answer = try await server.send("POST", "api/v1/auth/register", json: body)
                        #expect(answer.status == 201, "\(String(decoding: answer.body, as: UTF8.self))")
                    }
                }
                try await group.waitForAll()
            }
            let opened = try PostgresLatchkeyDatabase(url: database, logger: TestServer.quietLogger)
            try await opened.whileRunning {
                try await MultiProcessTests.eventually(within: .seconds(60), "every queued mail marked sent") {
                    let counts = try await opened.read { sql in
                        try await sql.raw("SELECT COUNT(*) AS total, COUNT(sent_at) AS sent FROM outbox").first().map {
                            (try $0.decode(column: "total", as: Int.self), try $0.decode(column: "sent", as: Int.self))
                        }
                    }
                    return counts.map { $0.0 == addresses.count && $0.1 == addresses.count } ?? false
                }
            }
        } catch {
            _ = await a.terminate()
            _ = await b.terminate()
            throw error
        }
        for server in [a, b] {
            #expect(await server.terminate() == 0, "log:\n\(server.log)")
            // Racing for rows is normal work: no scan or delivery failed on the way.
            #expect(!server.log.contains("outbox failed") && !server.log.contains("delivery failed"), "log:\n\(server.log)")
        }

        var messageIDs: Set<String> = []
        for email in addresses {
            let delivered = try await peer.mails(to: email, count: 1)
            let all = try await peer.messages(to: email)
            #expect(all.count == 1, "\(email) got \(all.count) mails")
            for mail in delivered { messageIDs.insert(mail.message.headers["message-id"] ?? "") }
        }
        #expect(messageIDs.count == addresses.count)
    }
}
