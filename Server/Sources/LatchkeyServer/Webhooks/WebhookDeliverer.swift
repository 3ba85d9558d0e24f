import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import ServiceLifecycle
import Synchronization

/// Delivers the webhook outbox: fans new events out into one delivery per endpoint that takes them, claims due
/// deliveries one at a time per endpoint (a lease of one attempt and a margin, `FOR UPDATE SKIP LOCKED` on PostgreSQL, so several processes
/// deliver each event to each endpoint once), POSTs each signed the Standard Webhooks way, and records the answer:
/// 2xx delivered; 410 failed and the endpoint disabled (its other deliveries wait, pending, until
/// `latchkey webhooks enable`); anything else, a timeout or a network error retried after the next wait of
/// `webhooks.retry-schedule`, failed once it is used up. Runs beside the server, every second of the injected clock
/// (tests move a ``ManualClock`` past the poll, or set a long poll and call ``deliverDue()``).
package final class WebhookDeliverer: Service, Sendable {
    let store: any WebhookStore
    let configuration: WebhooksConfiguration
    let http: HTTPClient
    let clock: any WallClock
    let metrics: LatchkeyMetrics
    let logger: Logger
    /// Set at graceful shutdown: no further delivery is claimed.
    private let stopping = Atomic<Bool>(false)
    /// Set once the schema is migrated (the deliverer starts with the server's other services, while it prepares).
    private let opened = Atomic<Bool>(false)
    /// One pass at a time in this process: a test's ``deliverDue()`` waits for the poll's pass under way, then makes its own.
    private let passes = AsyncLock()

    init(
        store: any WebhookStore, configuration: WebhooksConfiguration, http: HTTPClient, clock: any WallClock, metrics: LatchkeyMetrics,
        logger: Logger
    ) {
        self.store = store
        self.configuration = configuration
        self.http = http
        self.clock = clock
        self.metrics = metrics
        self.logger = logger
    }

    /// Lets the deliverer read the outbox (the services are prepared).
    func open() { self.opened.store(true, ordering: .releasing) }

    /// Runs until graceful shutdown, which cancels an attempt under way: it is recorded as failed and retried, or, when
    /// even that cannot be written, its lease ends and the next pass (of any process) makes it again.
    package func run() async throws {
        await cancelWhenGracefulShutdown {
            // A pass each `pollInterval`, the first one interval after start: a test that sets a long interval makes
            // every pass itself, with no pass of the loop racing it.
            while !Task.isCancelled && !self.stopping.load(ordering: .acquiring) {
                do { try await self.clock.sleep(for: self.configuration.pollInterval) } catch { return }
                await self.deliverDue()
            }
        }
    }

    /// Fans out new events and makes every attempt due now (nothing before the schema is ready); returns how many
    /// deliveries succeeded.
    @discardableResult
    package func deliverDue() async -> Int {
        guard self.opened.load(ordering: .acquiring) else { return 0 }
        return (try? await self.passes.withLock { await self.pass() }) ?? 0
    }

    private func pass() async -> Int {
        var delivered = 0
        do {
            while try await self.store.fanOut(to: self.configuration.endpoints, at: self.clock.now(), limit: 100) == 100 {}
            // The endpoints at once, each endpoint's deliveries one at a time in order: a delivery is claimed only when
            // its attempt starts, for one attempt's time and a margin, so a process killed mid-attempt holds nothing
            // longer than that, and a slow endpoint never outlives the lease of deliveries still waiting their turn.
            let lease = self.configuration.timeout + Self.leaseMargin
            delivered += try await withThrowingTaskGroup(of: Int.self) { group in
                for endpoint in self.configuration.endpoints {
                    group.addTask {
                        var delivered = 0
                        while !Task.isCancelled {
                            let claimed = try await self.store.claimDueDeliveries(
                                endpoints: [endpoint.name], at: self.clock.now(), limit: 1, lease: lease)
                            guard let (delivery, event) = claimed.first else { break }
                            if await self.attempt(delivery, of: event, to: endpoint) { delivered += 1 }
                        }
                        return delivered
                    }
                }
                return try await group.reduce(0, +)
            }
        } catch {
            self.logger.warning("reading the webhook outbox failed", metadata: ["error": "\(String(reflecting: error))"])
        }
        return delivered
    }

    /// Makes one attempt of a claimed delivery and records its outcome; whether it was delivered.
    private func attempt(_ delivery: WebhookDelivery, of event: WebhookEvent, to endpoint: WebhookEndpoint) async -> Bool {
        let now = self.clock.now()
        var metadata: Logger.Metadata = [
            "endpoint": "\(endpoint.name)", "event_id": "\(event.id)", "event_type": "\(event.type.rawValue)", "attempt": "\(delivery.attempts)",
        ]
        let answer: Int?
        let failure: String?
        do {
            answer = try await self.post(event, to: endpoint, at: now)
            failure = (200..<300).contains(answer ?? 0) ? nil : "HTTP \(answer ?? 0)"
        } catch {
            answer = nil
            failure = Self.describe(error)
        }
        metadata["status"] = "\(answer.map(String.init) ?? "none")"
        let outcome: WebhookDelivery.Status
        var retryAt: Date?
        if failure == nil {
            outcome = .delivered
            self.logger.info("webhook delivered", metadata: metadata)
        } else if answer == 410 {
            outcome = .failed
            self.logger.warning("webhook endpoint answered 410: disabled until `latchkey webhooks enable`", metadata: metadata)
            await self.recording { try await self.store.disableEndpoint(endpoint.name, reason: "410 Gone", at: now) }
        } else if delivery.attempts <= self.configuration.retrySchedule.count {
            outcome = .pending
            let wait = self.configuration.retrySchedule[delivery.attempts - 1]
            retryAt = now.addingTimeInterval(wait)
            metadata["error"] = "\(failure ?? "")"
            metadata["retry_in"] = "\(Int(wait))s"
            self.logger.warning("webhook delivery failed; will retry", metadata: metadata)
        } else {
            outcome = .failed
            metadata["error"] = "\(failure ?? "")"
            self.logger.warning("webhook delivery failed for good", metadata: metadata)
        }
        self.metrics.webhookDelivery(endpoint: endpoint.name, outcome: answer == 410 ? "disabled" : outcome == .pending ? "retry" : outcome.rawValue)
        await self.recording {
            try await self.store.recordAttempt(
                eventID: event.id, endpoint: endpoint.name, status: outcome, answer: answer, error: failure, retryAt: retryAt, at: self.clock.now())
        }
        return outcome == .delivered
    }

    /// POSTs the event's body signed for this attempt; the answer's status.
    private func post(_ event: WebhookEvent, to endpoint: WebhookEndpoint, at time: Date) async throws -> Int {
        let body = event.body()
        let timestamp = Int(time.timeIntervalSince1970)
        var request = HTTPClientRequest(url: endpoint.url)
        request.method = .POST
        request.headers.add(name: "content-type", value: "application/json")
        request.headers.add(name: "user-agent", value: "Latchkey-Webhooks")
        request.headers.add(name: "webhook-id", value: event.id)
        request.headers.add(name: "webhook-timestamp", value: String(timestamp))
        request.headers.add(
            name: "webhook-signature",
            value: WebhookSignature.header(key: endpoint.signingKey ?? Data(), id: event.id, timestamp: timestamp, body: body))
        request.body = .bytes(ByteBuffer(bytes: body))
        let response = try await self.http.execute(request, timeout: .milliseconds(Int64(self.configuration.timeout * 1000)))
        // The answer's body is not needed; reading a little of it lets the connection be reused.
        _ = try? await response.body.collect(upTo: 64 * 1024)
        return Int(response.status.code)
    }

    private func recording(_ write: () async throws -> Void) async {
        do { try await write() } catch {
            self.logger.warning("recording a webhook delivery failed", metadata: ["error": "\(String(reflecting: error))"])
        }
    }

    /// A network failure in words fit for a log line and `latchkey webhooks deliveries` (never a URL's secret parts).
    static func describe(_ error: any Error) -> String {
        if let error = error as? HTTPClientError {
            switch error {
            case .deadlineExceeded, .readTimeout, .connectTimeout: return "timed out"
            default: return "HTTP client: \(error)"
            }
        }
        if let error = error as? IOError { return "connection failed: \(error.description)" }
        return "\(type(of: error))"
    }
}

extension WebhookDeliverer {
    /// What a delivery's lease allows beyond `webhooks.timeout`: recording the answer.
    static let leaseMargin: TimeInterval = 15
}

extension HTTPClient {
    /// The client webhooks are POSTed with: a redirect is never followed (the configured URL is where events go), and a
    /// connection that cannot be made fails the attempt at once rather than being tried again until `webhooks.timeout`:
    /// the retry schedule is the outbox's, so an endpoint that is down costs no attempt more than a refused connection.
    static let webhookDelivery: HTTPClient = {
        var configuration = HTTPClient.Configuration.singletonConfiguration
        configuration.redirectConfiguration = .disallow
        configuration.connectionPool.retryConnectionEstablishment = false
        return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }()
}
