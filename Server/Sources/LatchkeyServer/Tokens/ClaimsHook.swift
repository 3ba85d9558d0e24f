import AsyncHTTPClient
import Foundation
import LatchkeyAPI
import Logging
import NIOCore
import NIOHTTP1

/// The app's claims hook (`hooks.claims.url`): asked, before a session access token is issued, which claims to add.
///
/// The call is a POST of `{user_id, kind, token_kind, identities, app_metadata, amr}` signed the Standard Webhooks way
/// (`webhook-id`, `webhook-timestamp`, `webhook-signature: v1,<base64 HMAC-SHA256 of "id.timestamp.body">`); the
/// answer's `{"claims": {…}}` is merged, reserved names dropped. A call slower than `hooks.claims.timeout`, a status
/// other than 2xx, an answer that is not such an object, or claims over `claims.max-bytes` fail: `omit` issues without
/// them (counted, and logged without secrets), `refuse` throws ``ServiceError/claimsHookFailed``. The hook never gets a
/// token or secret.
package struct ClaimsHook: Sendable {
    let url: String
    /// The bytes the base64 after `whsec_` encodes.
    let key: Data
    let timeout: TimeInterval
    let maxBytes: Int
    let onFailure: ClaimsConfiguration.FailureMode
    let http: HTTPClient
    let clock: any WallClock
    let metrics: LatchkeyMetrics
    let logger: Logger

    /// The hook of `configuration`, nil when none is set.
    init?(_ configuration: ClaimsConfiguration, http: HTTPClient, clock: any WallClock, metrics: LatchkeyMetrics, logger: Logger) {
        guard let url = configuration.hookURL, let key = configuration.hookSecret.flatMap(ClaimsConfiguration.signingKey) else { return nil }
        self.url = url
        self.key = key
        self.timeout = configuration.hookTimeout
        self.maxBytes = configuration.maxBytes
        self.onFailure = configuration.onFailure
        self.http = http
        self.clock = clock
        self.metrics = metrics
        self.logger = logger
    }

    /// The claims the hook adds for `subject`'s session token of `amr`: empty after a failure under `omit`.
    func claims(for subject: ClaimsSubject, amr: [AuthenticationMethod]) async throws -> [String: JSONValue] {
        do {
            return try await self.call(for: subject, amr: amr)
        } catch let failure as Failure {
            self.metrics.claimsHookFailed(reason: failure.reason)
            self.logger.warning(
                "claims hook failed", metadata: ["reason": "\(failure.reason)", "user_id": "\(subject.userID)", "on_failure": "\(self.onFailure)"])
            if self.onFailure == .refuse { throw ServiceError.claimsHookFailed }
            return [:]
        }
    }

    /// Why a call failed, as the metric counts it.
    struct Failure: Error {
        let reason: String
    }

    private func call(for subject: ClaimsSubject, amr: [AuthenticationMethod]) async throws -> [String: JSONValue] {
        let body = Self.body(subject, amr: amr)
        let id = "msg_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        let timestamp = Int(self.clock.now().timeIntervalSince1970)
        var request = HTTPClientRequest(url: self.url)
        request.method = .POST
        request.headers.add(name: "content-type", value: "application/json")
        request.headers.add(name: "webhook-id", value: id)
        request.headers.add(name: "webhook-timestamp", value: String(timestamp))
        request.headers.add(name: "webhook-signature", value: WebhookSignature.header(key: self.key, id: id, timestamp: timestamp, body: Data(body)))
        request.body = .bytes(ByteBuffer(bytes: body))
        let timeout = self.timeout
        let prepared = request
        let answer: Data = try await withThrowingTaskGroup(of: Data?.self) { group in
            group.addTask {
                let response: HTTPClientResponse
                do { response = try await self.http.execute(prepared, timeout: .milliseconds(Int64(timeout * 1000))) } catch {
                    // The client's own deadline and the race below end at the same moment: either is a timeout.
                    throw Failure(reason: (error as? HTTPClientError) == .deadlineExceeded || error is CancellationError ? "timeout" : "unreachable")
                }
                guard (200..<300).contains(response.status.code) else { throw Failure(reason: "status") }
                guard let buffer = try? await response.body.collect(upTo: 64 * 1024) else { throw Failure(reason: "answer") }
                return Data(buffer.readableBytesView)
            }
            group.addTask {
                try? await Task.sleep(for: .milliseconds(Int64(timeout * 1000)))
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let data = first else { throw Failure(reason: "timeout") }
            return data
        }
        guard let parsed = try? JSONDecoder().decode(HookAnswer.self, from: answer) else { throw Failure(reason: "answer") }
        let claims = (parsed.claims ?? [:]).filter { !TokenClaims.reserved.contains($0.key) }
        guard JSONValue.compact(claims).count <= self.maxBytes else { throw Failure(reason: "too_large") }
        return claims
    }

    private struct HookAnswer: Decodable {
        var claims: [String: JSONValue]?
    }

    /// The request body: the user's ID, kind, identities and `app_metadata`, the token's kind and `amr`; nothing secret.
    static func body(_ subject: ClaimsSubject, amr: [AuthenticationMethod]) -> [UInt8] {
        var identities: [JSONValue] = []
        for identity in subject.identities {
            identities.append(.object(["provider": .string(identity.provider), "subject": .string(identity.subject)]))
        }
        let body: [String: JSONValue] = [
            "user_id": .string(subject.userID), "kind": .string(subject.kind.rawValue), "token_kind": .string(TokenKind.session.rawValue),
            "identities": .array(identities), "app_metadata": .object(subject.appMetadata ?? [:]),
            "amr": .array(amr.map { .string($0.rawValue) }),
        ]
        return Array(JSONValue.compact(body))
    }
}
