import Foundation
import HTTPTypes
import LatchkeyAPI

/// Writes the OpenAPI 3.0.3 document of `operations`: paths from the operations, schemas from the Codable types they
/// name (``SchemaRecorder``), and the shared headers and security schemes.
package struct APIDocumentBuilder {
    let operations: [APIOperation]
    let version: String

    /// Headers answers may carry, by the name outcomes use.
    static let headers: [String: (description: String, schema: JSONSchema)] = [
        "X-Request-ID": ("The request's ID, also on the server's log line for it.", .string()),
        "X-RateLimit-Limit": ("Requests allowed per window.", .integer),
        "X-RateLimit-Remaining": ("Requests left in the current window.", .integer),
        "X-RateLimit-Reset": ("When the window's oldest counted request leaves it, seconds since 1970.", .integer),
        "Retry-After": ("Seconds to wait before trying again.", .integer),
        "WWW-Authenticate": ("`Bearer realm=\"latchkey\"`, with `error=\"invalid_token\"` when a credential was presented (RFC 6750).", .string()),
        "DPoP-Nonce": ("The nonce the next DPoP proof must carry (RFC 9449 §8).", .string()),
        "Cache-Control": ("`no-store` on answers that carry tokens.", .string()),
        "X-Latchkey-Attested": ("`true` for the token of a device attested with App Attest (claim `att`); absent otherwise.", .string()),
    ]

    /// The document as JSON bytes (sorted keys, so it is the same every time).
    package func json() throws -> Data {
        let recorder = SchemaRecorder()
        var paths: [String: [String: Any]] = [:]
        for operation in self.operations {
            paths[operation.path, default: [:]][operation.method.rawValue.lowercased()] = try self.entry(operation, recorder: recorder)
        }
        _ = try recorder.schema(of: ErrorEnvelope.self)
        var schemas = recorder.schemas.mapValues(\.json)
        schemas.merge(Self.webhookSchemas.mapValues(\.json)) { recorded, _ in recorded }
        let document: [String: Any] = [
            "openapi": "3.0.3",
            "info": [
                "title": "Latchkey", "version": self.version,
                "description":
                    "Device-first authentication for Swift apps. Every error answers {\"error\": {\"code\", \"message\"}}; "
                    + "codes are stable and machine-matchable, messages never carry a token or secret.",
            ],
            "paths": paths,
            "components": [
                "schemas": schemas,
                "headers": Self.headers.mapValues { ["description": $0.description, "schema": $0.schema.json] },
                "securitySchemes": [
                    "bearerAuth": [
                        "type": "http", "scheme": "bearer", "bearerFormat": "JWT",
                        "description": "A Latchkey access token (session, access code or guest), or a configured identity provider's token.",
                    ],
                    "serviceKey": ["type": "http", "scheme": "bearer", "description": "The server's usage service key (`usage.service-key`)."],
                    "backendKey": [
                        "type": "http", "scheme": "bearer",
                        "description": "A backend API key of the app's own server (`backend.service-key` or one of `backend.service-keys`).",
                    ],
                ],
            ],
        ]
        return try JSONSerialization.data(withJSONObject: document, options: [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes])
    }

    /// The webhook payloads (`{"type", "timestamp", "data"}`): one schema per event type, its `type` an enum of that name,
    /// and `WebhookEvent`, whose `type` enum lists every event name.
    static var webhookSchemas: [String: JSONSchema] {
        func payload(_ names: [String], data: JSONSchema) -> JSONSchema {
            .object(
                properties: ["type": .string(values: names), "timestamp": .string(format: "date-time"), "data": data],
                required: ["type", "timestamp", "data"])
        }
        var schemas = ["WebhookEvent": payload(WebhookEventType.allCases.map(\.rawValue), data: .map(.string()))]
        for type in WebhookEventType.allCases {
            let keys = type.requiredDataKeys + type.optionalDataKeys
            let properties = Dictionary(uniqueKeysWithValues: keys.map { ($0, JSONSchema.string(values: WebhookEventType.dataValues[$0])) })
            schemas[type.schemaName] = payload([type.rawValue], data: .object(properties: properties, required: type.requiredDataKeys))
        }
        return schemas
    }

    private func entry(_ operation: APIOperation, recorder: SchemaRecorder) throws -> [String: Any] {
        var entry: [String: Any] = [
            "operationId": operation.id, "tags": [operation.tag], "summary": operation.summary, "description": operation.description,
        ]
        switch operation.security {
        case .none: break
        case .bearer: entry["security"] = [["bearerAuth": []]]
        case .optionalBearer: entry["security"] = [[String: Any](), ["bearerAuth": []]]
        case .serviceKey: entry["security"] = [["serviceKey": []]]
        case .backendKey: entry["security"] = [["backendKey": []]]
        }
        let pathParameters = operation.path.split(separator: "/").filter { $0.hasPrefix("{") }.map { String($0.dropFirst().dropLast()) }
        let parameters =
            pathParameters.filter { name in !operation.parameters.contains { $0.name == name } }
            .map { APIOperation.Parameter($0, in: .path, required: true, "") } + operation.parameters
        if !parameters.isEmpty {
            entry["parameters"] = parameters.map { parameter -> [String: Any] in
                [
                    "name": parameter.name, "in": parameter.location.rawValue, "required": parameter.required, "description": parameter.description,
                    "schema": parameter.schema.json,
                ]
            }
        }
        if let body = operation.requestBody {
            var content: [String: Any] = ["schema": try recorder.schema(of: body).json]
            if let example = operation.requestExample, let data = example.data(using: .utf8) {
                content["example"] = try JSONSerialization.jsonObject(with: data)
            }
            entry["requestBody"] = ["required": !operation.requestBodyOptional, "content": ["application/json": content]]
        }
        var responses: [String: Any] = [:]
        for outcome in operation.outcomes {
            var response: [String: Any] = ["description": outcome.description]
            let headers = ["X-Request-ID"] + outcome.headers + operation.commonHeaders.filter { !outcome.headers.contains($0) }
            response["headers"] = Dictionary(uniqueKeysWithValues: headers.map { ($0, ["$ref": "#/components/headers/\($0)"]) })
            let schema = try outcome.body.map { try recorder.schema(of: $0) } ?? (outcome.status >= 400 ? .reference("ErrorEnvelope") : nil)
            if outcome.isHTMLPage {
                response["content"] = ["text/html": ["schema": ["type": "string"]]]
            } else if let schema {
                response["content"] = ["application/json": ["schema": schema.json]]
            }
            responses[String(outcome.status)] = response
        }
        // Whatever else goes wrong (a database fault, say) is a 500 with the envelope, never a stack trace.
        responses["default"] = [
            "description": "An unexpected server error (500), with the error envelope.",
            "headers": ["X-Request-ID": ["$ref": "#/components/headers/X-Request-ID"]],
            "content": ["application/json": ["schema": JSONSchema.reference("ErrorEnvelope").json]],
        ]
        entry["responses"] = responses
        return entry
    }
}
