import Configuration
import Foundation

/// The webhooks' settings. Keys (under `webhooks.`): `endpoints` (file only: a JSON array of
/// `{"name", "url", "secret", "events"}`), `retry-schedule` (seconds: the n-th is the wait after the n-th failed
/// attempt; default `[5, 300, 1800, 7200, 18000, 36000]`; used up, the delivery is `failed`), `timeout` (seconds one
/// attempt may take, default 10).
public struct WebhooksConfiguration: Sendable, Equatable {
    public var endpoints: [WebhookEndpoint] = []
    /// Seconds to wait after the n-th failed attempt before the next; the first attempt is at once.
    public var retrySchedule: [TimeInterval] = [5, 300, 1800, 7200, 18_000, 36_000]
    /// Seconds one attempt may take.
    public var timeout: TimeInterval = 10
    /// Seconds of the injected clock between the deliverer's looks at the outbox (no setting: tests that call
    /// ``WebhookDeliverer/deliverDue()`` themselves set it long, so no poll runs beside them).
    package var pollInterval: TimeInterval = 1
    /// What is wrong with the settings; ``LatchkeyServices`` refuses to start with any.
    var problems: [String] = []

    public init(endpoints: [WebhookEndpoint] = []) {
        self.endpoints = endpoints
    }

    init(reader: ConfigReader) {
        let defaults = Self()
        self.retrySchedule = reader.doubleArray(forKey: "retry-schedule", default: defaults.retrySchedule)
        self.timeout = reader.double(forKey: "timeout", default: defaults.timeout)
        let list = ObjectListSetting(reader: reader, key: "endpoints", name: "webhooks.endpoints")
        self.problems = list.problems
        for (index, object) in list.objects.enumerated() {
            self.problems += list.unknownFields(index, allowed: ["name", "url", "secret", "events"])
            let endpoint = WebhookEndpoint(
                name: object["name"] as? String ?? "", url: object["url"] as? String ?? "", secret: object["secret"] as? String ?? "",
                events: object["events"] as? [String] ?? [])
            self.problems += endpoint.problems.map { list.problem(index, $0) }
            if self.endpoints.contains(where: { $0.name == endpoint.name }) {
                self.problems.append(list.problem(index, "the name \"\(endpoint.name)\" is used twice"))
            }
            self.endpoints.append(endpoint)
        }
        if self.retrySchedule.contains(where: { !($0 >= 0 && $0.isFinite) }) {
            self.problems.append("webhooks.retry-schedule must be a list of seconds, each 0 or more")
        }
    }

    /// The endpoint named `name`.
    public func endpoint(named name: String) -> WebhookEndpoint? {
        self.endpoints.first { $0.name == name }
    }
}

/// One receiver of webhooks: a `webhooks.endpoints` entry.
public struct WebhookEndpoint: Sendable, Equatable, CustomStringConvertible {
    public var name: String
    public var url: String
    /// `whsec_` and base64 of the signing key: never logged nor shown.
    var secret: String
    /// The event types it gets; `*`: all of them.
    public var events: [String]

    public init(name: String, url: String, secret: String, events: [String]) {
        self.name = name
        self.url = url
        self.secret = secret
        self.events = events
    }

    /// Name and URL only: the secret is never shown.
    public var description: String { "WebhookEndpoint(\(self.name), \(self.url))" }

    /// Whether events of `type` go to this endpoint (`webhook.test` goes only where it is sent, by name).
    func accepts(_ type: WebhookEventType) -> Bool {
        type != .webhookTest && (self.events.contains("*") || self.events.contains(type.rawValue))
    }

    /// The HMAC key: the bytes the base64 after `whsec_` encodes.
    var signingKey: Data? {
        guard self.secret.hasPrefix("whsec_") else { return nil }
        return Data(base64Encoded: String(self.secret.dropFirst("whsec_".count)))
    }

    /// What is wrong with the entry, never quoting the secret.
    var problems: [String] {
        var problems: [String] = []
        if self.name.isEmpty { problems.append("\"name\" must be non-empty text") }
        if !Self.isAllowedURL(self.url) {
            problems.append("\"url\" must be an https URL (http only for a loopback host such as 127.0.0.1 or localhost)")
        }
        if (self.signingKey?.count ?? 0) < 24 {
            problems.append("\"secret\" must be whsec_ and base64 of at least 24 bytes (`latchkey webhooks secret` prints one)")
        }
        let known = Set(WebhookEventType.allCases.filter { $0 != .webhookTest }.map(\.rawValue))
        if self.events.isEmpty || (self.events != ["*"] && !self.events.allSatisfy(known.contains)) {
            problems.append("\"events\" must be a non-empty list of event types (\(known.sorted().joined(separator: ", "))) or [\"*\"]")
        }
        return problems
    }

    /// An https URL, or http to a loopback host: what the server sends signed calls to (webhooks, the claims hook).
    static func isAllowedURL(_ url: String) -> Bool {
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(), let host = components.host,
            !host.isEmpty
        else { return false }
        if scheme == "https" { return true }
        return scheme == "http" && (host == "localhost" || host == "::1" || host == "[::1]" || host.hasPrefix("127."))
    }
}
