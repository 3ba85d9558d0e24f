import Foundation
import LatchkeyAPI
import Testing

@testable import LatchkeyServer

/// Webhooks from the server's side: events written with their change, delivered signed to a receiver on a real socket,
/// retried on the server's clock, and an endpoint that answers 410 disabled for good.
@Suite struct WebhookDeliveryTests {
    static func endpoint(_ url: String, events: [String] = ["*"]) -> WebhookEndpoint {
        WebhookEndpoint(name: "app", url: url, secret: WebhookReceiver.secret, events: events)
    }

    static func server(_ url: String, database: String? = nil, directory: URL? = nil) async throws -> TestServer {
        try await TestServer.make(directory: directory, database: database) {
            $0.webhooks = WebhooksConfiguration(endpoints: [Self.endpoint(url)])
            $0.webhooks.retrySchedule = [5, 60]
            $0.webhooks.pollInterval = 86_400  // each test makes its passes itself
        }
    }

    @Test func registerLogoutAndDeleteArriveSignedInOrder() async throws {
        let receiver = WebhookReceiver()
        try await receiver.run { url in
            let server = try await Self.server(url)
            try await server.test(.router) { client in
                let device = try await client.registerDevice()
                #expect(try await client.send(.post, "/api/v1/auth/logout", bearer: device.accessToken).status == .ok)
                let second = try await client.registerDevice()
                #expect(try await client.send(.delete, "/api/v1/users/me", bearer: second.accessToken).status == .ok)
                #expect(await server.services.webhooks.deliverDue() == 7)

                let deliveries = receiver.deliveries
                try #require(deliveries.count == 7)
                #expect(deliveries.allSatisfy { $0.signatureValid })
                #expect(Set(deliveries.map(\.id)).count == deliveries.count)
                #expect(
                    deliveries.map(\.type) == [
                        "user.created", "session.created", "session.revoked", "user.created", "session.created", "session.revoked", "user.deleted",
                    ])
                #expect(deliveries[0].data["kind"] == "device")
                #expect(deliveries[2].data["reason"] == "logout")
                #expect(deliveries[5].data["reason"] == "deleted")
                #expect(deliveries[6].data["user_id"] == deliveries[3].data["user_id"])
                #expect(!deliveries.contains { $0.body.contains(device.accessToken) || $0.body.contains(device.refreshToken) })
            }
        }
    }

    /// No call from the test: the deliverer's poll runs each second of the server's clock.
    @Test func thePollDeliversOnceTheServersClockMoves() async throws {
        let receiver = WebhookReceiver()
        try await receiver.run { url in
            let server = try await TestServer.make { $0.webhooks = WebhooksConfiguration(endpoints: [Self.endpoint(url)]) }
            try await server.test(.router) { client in
                _ = try await client.registerDevice()
                for _ in 0..<500 where receiver.deliveries.count < 2 {
                    server.clock.advance(by: 1)
                    try await Task.sleep(for: .milliseconds(10))
                }
                #expect(receiver.deliveries.map(\.type) == ["user.created", "session.created"])
            }
        }
    }

    @Test func aConfirmedFactorAndSupportsResetEachTellTheirFactor() async throws {
        let receiver = WebhookReceiver()
        try await receiver.run { url in
            let server = try await Self.server(url)
            try await server.test(.router) { client in
                let device = try await client.registerDevice()
                let factor = try await client.confirmedFactor(bearer: device.accessToken, at: server.clock.now())
                #expect(try await server.services.secondFactors.reset(userID: device.userID) == 1)
                await server.services.webhooks.deliverDue()
                let events = receiver.deliveries.filter { $0.type.hasPrefix("mfa.") }
                #expect(events.map(\.type) == ["mfa.enabled", "mfa.disabled"])
                #expect(events.allSatisfy { $0.data["factor_id"] == factor.factorID && $0.data["factor_type"] == "totp" })
                #expect(!receiver.deliveries.contains { $0.body.contains(factor.secret) })
            }
        }
    }

    @Test func aFailedAttemptIsRetriedWithTheSameIDWhenTheScheduleSays() async throws {
        let receiver = WebhookReceiver()
        receiver.answer(500)
        try await receiver.run { url in
            let server = try await Self.server(url)
            try await server.test(.router) { _ in
                _ = try await server.services.users.register(userID: "webhook-retry-\(UUID().uuidString)")
                #expect(await server.services.webhooks.deliverDue() == 0)
                server.clock.advance(by: 4)
                #expect(await server.services.webhooks.deliverDue() == 0)  // the first wait (5 s) is not over
                receiver.answer(200)
                server.clock.advance(by: 1)
                #expect(await server.services.webhooks.deliverDue() == 1)
                let attempts = receiver.deliveries
                try #require(attempts.count == 2)
                #expect(attempts[0].id == attempts[1].id)
                #expect(attempts[1].timestamp == attempts[0].timestamp + 5)
                #expect(attempts.allSatisfy { $0.signatureValid })
                let delivery = try #require(try await server.services.store.webhookDeliveries(endpoint: "app", status: nil, limit: 5).first)
                #expect(delivery.status == .delivered)
                #expect(delivery.attempts == 2)
                #expect(delivery.lastStatus == 200)
            }
        }
    }

    @Test func theScheduleUsedUpFailsTheDelivery() async throws {
        let receiver = WebhookReceiver()
        receiver.answer(503)
        try await receiver.run { url in
            let server = try await Self.server(url)
            try await server.test(.router) { _ in
                _ = try await server.services.users.register(userID: "webhook-fail-\(UUID().uuidString)")
                for wait in [0, 5, 60] as [TimeInterval] {
                    server.clock.advance(by: wait)
                    await server.services.webhooks.deliverDue()
                }
                let delivery = try #require(try await server.services.store.webhookDeliveries(endpoint: "app", status: nil, limit: 5).first)
                #expect(delivery.status == .failed)
                #expect(delivery.attempts == 3)
                #expect(delivery.lastStatus == 503)
                #expect(receiver.deliveries.count == 3)
            }
        }
    }

    @Test func a410DisablesTheEndpointAcrossARestartUntilEnabled() async throws {
        let receiver = WebhookReceiver()
        receiver.answer(410)
        try await receiver.run { url in
            let first = try await Self.server(url)
            let database = first.databasePath
            let directory = first.directory
            _ = try await first.services.users.register(userID: "webhook-gone-1-\(UUID().uuidString)")
            await first.services.webhooks.deliverDue()
            #expect(receiver.deliveries.count == 1)
            _ = try await first.services.users.register(userID: "webhook-gone-2-\(UUID().uuidString)")
            await first.services.webhooks.deliverDue()
            #expect(receiver.deliveries.count == 1)  // disabled: nothing more is sent
            await first.close()

            receiver.answer(200)
            let second = try await Self.server(url, database: database, directory: directory)
            try await second.test(.router) { _ in
                _ = try await second.services.users.register(userID: "webhook-gone-3-\(UUID().uuidString)")
                await second.services.webhooks.deliverDue()
                #expect(receiver.deliveries.count == 1)
                #expect(try await second.services.store.disabledEndpoints().map(\.name) == ["app"])
                #expect(try await second.services.store.enableEndpoint("app", at: second.clock.now()))
                _ = try await second.services.users.register(userID: "webhook-gone-4-\(UUID().uuidString)")
                #expect(await second.services.webhooks.deliverDue() == 1)  // only what was written after enabling
                #expect(receiver.deliveries.count == 2)
            }
        }
    }

    /// Two processes on one database (PostgreSQL with `LATCHKEY_TEST_BACKEND=postgresql`) passing at once: each event
    /// reaches the endpoint once.
    @Test func twoProcessesDeliverEachEventOnce() async throws {
        let receiver = WebhookReceiver()
        try await receiver.run { url in
            let first = try await Self.server(url)
            let second = try await Self.server(url, database: first.databasePath)
            try await first.test(.router) { client in
                for _ in 0..<5 { _ = try await client.registerDevice() }
                async let a = first.services.webhooks.deliverDue()
                async let b = second.services.webhooks.deliverDue()
                #expect(await a + b == 10)
                let ids = receiver.deliveries.map(\.id)
                #expect(ids.count == 10)
                #expect(Set(ids).count == 10)
            }
            await second.close()
        }
    }

    @Test func aRolledBackChangeWritesNoEvent() async throws {
        let receiver = WebhookReceiver()
        try await receiver.run { url in
            let server = try await Self.server(url)
            try await server.test(.router) { _ in
                let now = server.clock.now()
                await #expect(throws: CancellationError.self) {
                    try await server.services.database.transaction { sql in
                        try await SQLLatchkeyStore.emit(.userUpdated, userID: "rolled-back", ["change": "email_set"], at: now, on: sql)
                        throw CancellationError()
                    }
                }
                _ = try await server.services.users.register(userID: "committed-\(UUID().uuidString)")
                await server.services.webhooks.deliverDue()
                #expect(receiver.deliveries.map(\.type) == ["user.created"])
            }
        }
    }

    @Test func aTestEventGoesToItsEndpointOnly() async throws {
        let receiver = WebhookReceiver()
        try await receiver.run { url in
            let server = try await TestServer.make {
                $0.webhooks = WebhooksConfiguration(endpoints: [
                    WebhookEndpoint(name: "app", url: url, secret: WebhookReceiver.secret, events: ["user.deleted"]),
                    WebhookEndpoint(name: "other", url: url + "?other", secret: WebhookReceiver.secret, events: ["*"]),
                ])
                $0.webhooks.pollInterval = 86_400
            }
            try await server.test(.router) { _ in
                _ = try await server.services.store.queueTestEvent(endpoint: "app", at: server.clock.now())
                #expect(await server.services.webhooks.deliverDue() == 1)
                #expect(receiver.deliveries.map(\.type) == ["webhook.test"])
            }
        }
    }

    @Test func theConsoleShowsEndpointsAndDeliveriesWithoutSecretOrBody() async throws {
        let receiver = WebhookReceiver()
        receiver.answer(500)
        try await receiver.run { url in
            try await AdminConsoleTests.withConsole({
                $0.webhooks = WebhooksConfiguration(endpoints: [Self.endpoint(url)])
                $0.webhooks.pollInterval = 86_400
            }) { browser, client, server in
                try await browser.setUp(server)
                let device = try await client.registerDevice()
                await server.services.webhooks.deliverDue()
                let page = try await browser.get("/admin/webhooks")
                #expect(page.status == .ok)
                #expect(page.text.contains("<td>app</td>"))
                #expect(page.text.contains("<code>session.created</code>"))
                #expect(page.text.contains("<td>500</td>"))
                #expect(!page.text.contains(WebhookReceiver.secret) && !page.text.contains(device.accessToken))
            }
        }
    }

    @Test func theAPIDocumentHasEachPayloadWithItsTypeEnum() async throws {
        try await withServer(.router) { client, _ in
            let response = try await client.send(.get, "/openapi.json")
            let document = try #require(try JSONSerialization.jsonObject(with: Data(response.text.utf8)) as? [String: Any])
            let schemas = try #require((document["components"] as? [String: Any])?["schemas"] as? [String: Any])
            func typeEnum(_ name: String) -> [String]? {
                (((schemas[name] as? [String: Any])?["properties"] as? [String: Any])?["type"] as? [String: Any])?["enum"] as? [String]
            }
            #expect(typeEnum("WebhookEvent") == WebhookEventType.allCases.map(\.rawValue))
            #expect(typeEnum("WebhookSessionRevoked") == ["session.revoked"])
            #expect(typeEnum("WebhookUserCreated") == ["user.created"])
        }
    }

    @Test func configurationRefusesBadEndpointsWithoutShowingTheSecret() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("latchkey-webhooks-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("config.json")
        let secret = "whsec_" + Data(repeating: 9, count: 8).base64EncodedString()
        try Data(
            """
            {"webhooks": {"endpoints": [{"name": "a", "url": "http://example.com/h", "secret": "\(secret)", "events": ["nope"]},
                                        {"name": "a", "url": "https://example.com/h", "secret": "\(WebhookReceiver.secret)", "events": ["*"]}]}}
            """.utf8
        ).write(to: file)
        let error = try await #require(throws: LatchkeyConfigurationError.self) {
            try await LatchkeyConfiguration.load(overrides: [:], configFile: file.path, environment: [:])
        }
        let text = "\(error)"
        #expect(text.contains("webhooks.endpoints: entry 1: \"url\""))
        #expect(text.contains("entry 1: \"secret\""))
        #expect(text.contains("entry 1: \"events\""))
        #expect(text.contains("entry 2: the name \"a\" is used twice"))
        #expect(!text.contains(secret) && !text.contains(WebhookReceiver.secret))

        let good = directory.appendingPathComponent("good.json")
        try Data(
            """
            {"webhooks": {"endpoints": [{"name": "a", "url": "https://example.com/h", "secret": "\(WebhookReceiver.secret)", "events": ["*"]}]},
             "backend": {"service-keys": [{"name": "main", "key": "\(String(repeating: "k", count: 32))"}]}}
            """.utf8
        ).write(to: good)
        let configuration = try await LatchkeyConfiguration.load(overrides: [:], configFile: good.path, environment: [:])
        #expect(configuration.webhooks.endpoints.map(\.name) == ["a"])
        #expect(configuration.backendServiceKeys.map(\.name) == ["main"])
        #expect(configuration.settings["webhooks.endpoints"]?.shownValue == "<set>")
        await #expect(throws: LatchkeyConfigurationError.self) {
            try await LatchkeyConfiguration.load(overrides: [:], configFile: good.path, environment: ["LATCHKEY_WEBHOOKS_ENDPOINTS": "x"])
        }
    }
}
