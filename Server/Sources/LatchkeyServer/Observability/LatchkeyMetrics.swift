import CoreMetrics
import Foundation
import LatchkeyAPI
import Metrics
import Prometheus
import Synchronization

/// The server's metrics, recorded through swift-metrics into this server's own Prometheus registry.
///
/// Each server owns its registry (rather than bootstrapping the process-wide metrics system), so
/// several servers in one process, as in tests, keep separate counts.
package struct LatchkeyMetrics: Sendable {
    package let registry: PrometheusCollectorRegistry
    private let factory: PrometheusMetricsFactory
    /// The handles made so far, by label and dimensions: a request looks its handles up in one dictionary instead
    /// of building them again (each build takes the registry's lock and allocates).
    private let handles = Handles()

    package init() {
        self.registry = PrometheusCollectorRegistry()
        var factory = PrometheusMetricsFactory(registry: self.registry)
        factory.defaultDurationHistogramBuckets = [
            .microseconds(250), .microseconds(500), .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10),
            .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250), .seconds(1),
        ]
        self.factory = factory
    }

    /// One finished HTTP request.
    func requestFinished(route: String, method: String, status: Int, duration: Duration) {
        self.counter("latchkey_http_requests_total", [("route", route), ("method", method), ("status", String(status))]).increment()
        self.timer("latchkey_http_request_duration_seconds", [("route", route), ("method", method)]).recordNanoseconds(duration.nanoseconds)
        if status == 429 { self.handles.refusals.withLock { $0[method + " " + route, default: 0] += 1 } }
    }

    /// The 429 answers of this process since it started, by route (each route's limits: the admin overview).
    package func refusalsByRoute() -> [(route: String, count: Int)] {
        self.handles.refusals.withLock { $0 }.map { (route: $0.key, count: $0.value) }.sorted { ($0.count, $1.route) > ($1.count, $0.route) }
    }

    func tokenIssued(kind: TokenKind) {
        self.counter("latchkey_tokens_issued_total", [("kind", kind.rawValue)]).increment()
    }

    func refreshWithoutProof() {
        self.counter("latchkey_refresh_without_proof_total", []).increment()
    }

    /// A call of the claims hook that failed (`reason`: `timeout`, `status`, `answer`, `too_large`, `unreachable`); the
    /// token was issued without its claims (`omit`) or refused (`refuse`).
    func claimsHookFailed(reason: String) {
        self.counter("latchkey_claims_hook_failures_total", [("reason", reason)]).increment()
    }

    /// An `app_attest` that did not verify under `app-attest.policy` `report`: the device stayed unattested.
    func appAttestDowngraded() {
        self.counter("latchkey_app_attest_downgrades_total", []).increment()
    }

    func refreshTokenReuseDetected() {
        self.counter("latchkey_refresh_token_reuse_detected_total", []).increment()
    }

    /// The number of open event sockets (`GET /api/v1/events`) on this process.
    func eventSockets(_ count: Int) {
        self.handles.eventSockets.withLock { gauge in
            if gauge == nil { gauge = CoreMetrics.Gauge(label: "latchkey_event_sockets", dimensions: [], factory: self.factory) }
            gauge?.record(count)
        }
    }

    /// One event frame sent on an event socket.
    func eventSent(type: String) {
        self.counter("latchkey_events_sent_total", [("type", type)]).increment()
    }

    /// One webhook delivery attempt to `endpoint`: `outcome` delivered, retry, failed (for good) or disabled (410).
    func webhookDelivery(endpoint: String, outcome: String) {
        self.counter("latchkey_webhook_deliveries_total", [("endpoint", endpoint), ("outcome", outcome)]).increment()
    }

    private func counter(_ label: String, _ dimensions: [(String, String)]) -> CoreMetrics.Counter {
        let key = HandleKey(label: label, dimensions: dimensions.map { [$0.0, $0.1] })
        return self.handles.counters.withLock { counters in
            if let counter = counters[key] { return counter }
            let counter = CoreMetrics.Counter(label: label, dimensions: dimensions, factory: self.factory)
            counters[key] = counter
            return counter
        }
    }

    private func timer(_ label: String, _ dimensions: [(String, String)]) -> CoreMetrics.Timer {
        let key = HandleKey(label: label, dimensions: dimensions.map { [$0.0, $0.1] })
        return self.handles.timers.withLock { timers in
            if let timer = timers[key] { return timer }
            let timer = CoreMetrics.Timer(label: label, dimensions: dimensions, factory: self.factory)
            timers[key] = timer
            return timer
        }
    }

    private struct HandleKey: Hashable {
        var label: String
        var dimensions: [[String]]
    }

    private final class Handles: Sendable {
        let counters = Mutex<[HandleKey: CoreMetrics.Counter]>([:])
        let refusals = Mutex<[String: Int]>([:])
        let timers = Mutex<[HandleKey: CoreMetrics.Timer]>([:])
        let eventSockets = Mutex<CoreMetrics.Gauge?>(nil)
    }

    /// The Prometheus text exposition of every metric.
    func exposition() -> String {
        var buffer: [UInt8] = []
        self.registry.emit(into: &buffer)
        return String(decoding: buffer, as: UTF8.self)
    }
}

extension Duration {
    var nanoseconds: Int64 {
        let (seconds, attoseconds) = self.components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}
