import CoreMetrics
import Foundation
import LatchkeyAPI
import Metrics
import Prometheus

/// The server's metrics, recorded through swift-metrics into this server's own Prometheus registry.
///
/// Each server owns its registry (rather than bootstrapping the process-wide metrics system), so
/// several servers in one process, as in tests, keep separate counts.
@available(LatchkeyServer 1.0, *)
public struct LatchkeyMetrics: Sendable {
    public let registry: PrometheusCollectorRegistry
    private let factory: PrometheusMetricsFactory

    public init() {
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
        Counter(
            label: "latchkey_http_requests_total", dimensions: [("route", route), ("method", method), ("status", String(status))],
            factory: self.factory
        ).increment()
        Timer(label: "latchkey_http_request_duration_seconds", dimensions: [("route", route), ("method", method)], factory: self.factory)
            .recordNanoseconds(duration.nanoseconds)
    }

    func tokenIssued(kind: TokenKind) {
        Counter(label: "latchkey_tokens_issued_total", dimensions: [("kind", kind.rawValue)], factory: self.factory).increment()
    }

    func refreshWithoutProof() {
        Counter(label: "latchkey_refresh_without_proof_total", factory: self.factory).increment()
    }

    func refreshTokenReuseDetected() {
        Counter(label: "latchkey_refresh_token_reuse_detected_total", factory: self.factory).increment()
    }

    /// The Prometheus text exposition of every metric.
    func exposition() -> String {
        var buffer: [UInt8] = []
        self.registry.emit(into: &buffer)
        return String(decoding: buffer, as: UTF8.self)
    }
}

@available(LatchkeyServer 1.0, *)
extension Duration {
    var nanoseconds: Int64 {
        let (seconds, attoseconds) = self.components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}
