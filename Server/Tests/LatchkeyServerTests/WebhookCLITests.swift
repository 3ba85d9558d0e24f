import Foundation
import LatchkeyServer
import Testing

/// `latchkey webhooks …` as support runs it: the real executable, a configuration file naming one endpoint.
@Suite struct WebhookCLITests {
    @Test func secretNeedsNoDatabaseAndIsThirtyTwoRandomBytes() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("latchkey-webhook-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let first = try await LatchkeyCLI.run(["webhooks", "secret"], masterKey: TestServer.masterKey, workingDirectory: directory)
        let second = try await LatchkeyCLI.run(["webhooks", "secret"], masterKey: TestServer.masterKey, workingDirectory: directory)
        #expect(first.exitCode == 0, "\(first)")
        let secret = first.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(secret.hasPrefix("whsec_"))
        #expect(Data(base64Encoded: String(secret.dropFirst("whsec_".count)))?.count == 32)
        #expect(second.stdout != first.stdout)
    }

    @Test func sendTestQueuesForTheNamedEndpointAndRefusesAnUnknownOne() async throws {
        let server = try await TestServer.make()
        let file = server.directory.appendingPathComponent("webhooks.json")
        try Data(
            """
            {"webhooks": {"endpoints": [{"name": "app", "url": "https://example.com/hook", "secret": "\(WebhookReceiver.secret)", \
            "events": ["user.deleted"]}]}}
            """.utf8
        ).write(to: file)
        try await server.test(.router) { _ in
            let unknown = try await server.cli("webhooks", "send-test", "nope", "--config", file.path)
            #expect(unknown.exitCode == 3, "\(unknown)")
            #expect(unknown.stderr.contains("No endpoint nope"), "\(unknown)")

            let queued = try await server.cli("webhooks", "send-test", "app", "--config", file.path)
            #expect(queued.exitCode == 0, "\(queued)")
            #expect(queued.stdout.hasPrefix("queued evt_"), "\(queued)")

            let list = try await server.cli("webhooks", "list", "--config", file.path)
            #expect(list.tableRows.first?.first == "app")
            #expect(list.tableRows.first?.last == "enabled")
            #expect(!list.stdout.contains(WebhookReceiver.secret))

            let audit = try await server.cli("audit", "list", "--action", "webhooks")
            #expect(audit.stdout.contains("webhooks.send_test"), "\(audit)")
        }
    }
}
