import ArgumentParser
import Foundation
import LatchkeyServer

/// `latchkey webhooks secret|list|deliveries|retry|send-test|enable`: the webhook endpoints and their deliveries, for support.
struct WebhooksCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "webhooks", abstract: "Make endpoint secrets, list endpoints and deliveries, retry, test and enable endpoints.",
        subcommands: [Secret.self, List.self, Deliveries.self, Retry.self, SendTest.self, Enable.self])

    struct Secret: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print a new endpoint secret (whsec_ and base64 of 32 random bytes) for webhooks.endpoints; needs no database.")

        func run() throws {
            print(LatchkeyServices.newWebhookSecret())
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the configured endpoints: name, URL, events, enabled or disabled (a 410).")

        @OptionGroup var options: DatabaseOptions

        @Flag(help: "Print JSON.") var json = false

        func run() async throws {
            let (endpoints, disabled) = try await withServices(self.options) { services in
                (services.configuration.webhooks.endpoints, try await services.store.disabledEndpoints())
            }
            let rows = endpoints.map { endpoint in
                let state = disabled.first { $0.name == endpoint.name }
                return [
                    endpoint.name, endpoint.url, endpoint.events.joined(separator: ","),
                    state.map { "disabled since \($0.disabledAt.iso8601) (\($0.reason))" } ?? "enabled",
                ]
            }
            try printRows(["NAME", "URL", "EVENTS", "STATE"], rows, json: self.json)
        }
    }

    struct Deliveries: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List deliveries, newest first: event ID and type, endpoint, status, attempts, last answer, times (never the body).")

        @OptionGroup var options: DatabaseOptions

        @Option(help: "Only deliveries to this endpoint.")
        var endpoint: String?

        @Option(help: "Only deliveries in this status: pending, delivered or failed.")
        var status: String?

        @Option(help: "At most this many deliveries.")
        var limit = 50

        @Flag(help: "Print JSON.") var json = false

        func validate() throws {
            if let status, WebhookDelivery.Status(rawValue: status) == nil {
                throw ValidationError("--status must be pending, delivered or failed")
            }
        }

        func run() async throws {
            let deliveries = try await withServices(self.options) { services in
                try await services.store.webhookDeliveries(
                    endpoint: self.endpoint, status: self.status.flatMap(WebhookDelivery.Status.init(rawValue:)), limit: self.limit)
            }
            let rows = deliveries.map { delivery in
                [
                    delivery.eventID, delivery.eventType, delivery.endpoint, delivery.status.rawValue, String(delivery.attempts),
                    delivery.lastStatus.map(String.init) ?? "-", delivery.lastError ?? "-", delivery.createdAt.iso8601,
                    delivery.lastAttemptAt?.iso8601 ?? "-", delivery.status == .pending ? delivery.nextAttemptAt.iso8601 : "-",
                ]
            }
            try printRows(
                ["EVENT", "TYPE", "ENDPOINT", "STATUS", "ATTEMPTS", "LAST STATUS", "LAST ERROR", "CREATED", "LAST ATTEMPT", "NEXT ATTEMPT"], rows,
                json: self.json)
        }
    }

    struct Retry: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make an event's failed and pending deliveries due now with fresh attempts; a running server sends them within a second.")

        @OptionGroup var options: DatabaseOptions

        @Argument(help: "The event's ID (evt_…, the webhook-id header).")
        var eventID: String

        func run() async throws {
            let count = try await withAudit(
                self.options, AuditAction.webhooksRetry, { [id = self.eventID] (count: Int) in (id, "\(count) deliveries due now") }
            ) {
                services in
                guard let count = try await services.store.retryWebhookEvent(self.eventID, at: services.clock.now()) else {
                    throw ServiceError.notFound("No webhook event \(self.eventID).")
                }
                return count
            }
            print("\(count) delivery(ies) of \(self.eventID) due now")
        }
    }

    struct SendTest: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "send-test", abstract: "Queue a webhook.test event for one endpoint only, whatever its events; prints its ID.")

        @OptionGroup var options: DatabaseOptions

        @Argument(help: "The endpoint's name in webhooks.endpoints.")
        var endpoint: String

        func run() async throws {
            let id = try await withAudit(self.options, AuditAction.webhooksSendTest, { [name = self.endpoint] (id: String) in (name, "event \(id)") })
            { services in
                guard services.configuration.webhooks.endpoint(named: self.endpoint) != nil else {
                    let names = services.configuration.webhooks.endpoints.map(\.name)
                    throw ServiceError.notFound(
                        "No endpoint \(self.endpoint) in webhooks.endpoints (configured: \(names.isEmpty ? "none" : names.joined(separator: ", "))).")
                }
                return try await services.store.queueTestEvent(endpoint: self.endpoint, at: services.clock.now())
            }
            print("queued \(id) for \(self.endpoint)")
        }
    }

    struct Enable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Enable an endpoint a 410 disabled; its deliveries still pending go at once, later events reach it again.")

        @OptionGroup var options: DatabaseOptions

        @Argument(help: "The endpoint's name in webhooks.endpoints.")
        var name: String

        func run() async throws {
            let enabled = try await withAudit(
                self.options, AuditAction.webhooksEnable, { [name = self.name] (enabled: Bool) in (name, enabled ? "enabled" : "was not disabled") }
            ) {
                services in
                try await services.store.enableEndpoint(self.name, at: services.clock.now())
            }
            print(enabled ? "enabled \(self.name)" : "\(self.name) was not disabled")
        }
    }
}
