import Foundation
import Hummingbird

/// The console's webhooks page: the configured endpoints (enabled, or disabled by a 410) and the newest deliveries with
/// their status, attempts and the last answer's status; never an event's body beyond its type and IDs.
extension AdminRoutes {
    func webhooks(_ session: AdminSession) async throws -> Response {
        let (endpoints, deliveries) = try await self.console.webhooks(limit: 100)
        let values: [String: Any] = [
            "endpoints": endpoints.map { endpoint, state in
                [
                    "name": endpoint.name, "url": endpoint.url, "events": endpoint.events.joined(separator: ", "),
                    "state": state.map { "disabled since \(Self.format($0.disabledAt)) (\($0.reason))" } ?? "enabled", "disabled": state != nil,
                ]
            },
            "deliveries": deliveries.map { delivery in
                [
                    "created": Self.format(delivery.createdAt), "event": delivery.eventID, "type": delivery.eventType, "endpoint": delivery.endpoint,
                    "status": delivery.status.rawValue, "attempts": String(delivery.attempts),
                    "last_status": delivery.lastStatus.map(String.init) ?? delivery.lastError ?? "—",
                    "last_attempt": delivery.lastAttemptAt.map(Self.format) ?? "—",
                ]
            },
        ]
        return self.render("webhooks", title: "Webhooks", session: session, nav: "webhooks", values)
    }
}

extension AdminTemplates {
    static let webhookTemplates: [String: String] = [
        "webhooks": """
        <h1>Webhooks</h1>
        <h2>Endpoints</h2>
        <div class="scroll"><table id="webhook-endpoints"><thead><tr><th>Name</th><th>URL</th><th>Events</th><th>State</th></tr></thead><tbody>
        {{#endpoints}}<tr><td>{{name}}</td><td><code>{{url}}</code></td><td>{{events}}</td>\
        <td{{#disabled}} class="danger"{{/disabled}}>{{state}}</td></tr>{{/endpoints}}
        {{^endpoints}}<tr><td colspan="4" class="muted">No endpoints: set webhooks.endpoints in the configuration file.</td></tr>{{/endpoints}}
        </tbody></table></div>
        <p class="muted">A disabled endpoint is enabled again with <code>latchkey webhooks enable &lt;name&gt;</code>.</p>
        <h2>Recent deliveries</h2>
        <div class="scroll"><table id="webhook-deliveries"><thead><tr><th>Created</th><th>Event</th><th>Type</th><th>Endpoint</th><th>Status</th>\
        <th>Attempts</th><th>Last answer</th><th>Last attempt</th></tr></thead><tbody>
        {{#deliveries}}<tr><td>{{created}}</td><td><code>{{event}}</code></td><td><code>{{type}}</code></td><td>{{endpoint}}</td>\
        <td>{{status}}</td><td>{{attempts}}</td><td>{{last_status}}</td><td>{{last_attempt}}</td></tr>{{/deliveries}}
        {{^deliveries}}<tr><td colspan="8" class="muted">No deliveries.</td></tr>{{/deliveries}}
        </tbody></table></div>
        """
    ]
}
