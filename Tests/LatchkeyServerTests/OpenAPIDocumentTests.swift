import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

/// The served OpenAPI document and the server agree: every documented operation exists and answers
/// with a documented status, and every endpoint the server has is documented.
@Suite struct OpenAPIDocumentTests {
    /// The endpoints the server serves; a new route must be added here and to the document.
    @available(LatchkeyServer 1.0, *)
    static let servedOperations: Set<String> = [
        "GET /api/v1/health", "GET /api/v1/health/ready", "POST /api/v1/users/register", "POST /api/v1/auth/register-device",
        "POST /api/v1/auth/guest", "POST /api/v1/usage", "GET /api/v1/authorize",
        "POST /api/v1/auth/refresh", "POST /api/v1/auth/logout", "GET /api/v1/auth/me", "GET /api/v1/users/me",
        "GET /api/v1/validate-token", "POST /api/v1/auth/access-code/exchange", "GET /.well-known/jwks.json",
        "GET /.well-known/openid-configuration", "GET /openapi.json", "GET /metrics", "POST /api/v1/auth/apple",
        "POST /api/v1/auth/token-exchange", "DELETE /api/v1/users/me", "DELETE /api/v1/users/me/identities/{provider}",
    ]

    @available(LatchkeyServer 1.0, *)
    static func documentedOperations(_ document: [String: Any]) -> [String: Set<String>] {
        var operations: [String: Set<String>] = [:]
        for (path, item) in document["paths"] as? [String: [String: Any]] ?? [:] {
            for (method, operation) in item {
                guard let responses = (operation as? [String: Any])?["responses"] as? [String: Any] else { continue }
                operations["\(method.uppercased()) \(path)"] = Set(responses.keys)
            }
        }
        return operations
    }

    @available(LatchkeyServer 1.0, *)
    @Test func everyServedEndpointIsDocumentedAndNothingElse() async throws {
        try await withServer(.router) { client, _ in
            let response = try await client.send(.get, "/openapi.json")
            #expect(response.status == .ok)
            let document = try #require(try JSONSerialization.jsonObject(with: Data(response.body.readableBytesView)) as? [String: Any])
            #expect(document["openapi"] as? String == "3.0.3")
            #expect(Set(Self.documentedOperations(document).keys) == Self.servedOperations)
        }
    }

    @available(LatchkeyServer 1.0, *)
    @Test func everyDocumentedOperationAnswersWithADocumentedStatus() async throws {
        try await withServer(.live) { client, _ in
            let response = try await client.send(.get, "/openapi.json")
            let document = try #require(try JSONSerialization.jsonObject(with: Data(response.body.readableBytesView)) as? [String: Any])
            for (operation, statuses) in Self.documentedOperations(document) {
                let parts = operation.split(separator: " ")
                let method = HTTPRequest.Method(String(parts[0]))!
                let path = String(parts[1]).replacingOccurrences(of: "{provider}", with: "apple")
                let answer = try await client.send(method, path, json: method == .post ? "{}" : nil)
                #expect(statuses.contains(String(answer.status.code)), "\(operation) answered \(answer.status.code), documented: \(statuses)")
                #expect(answer.headers[.contentType] != nil, "\(operation) has no content type")
            }
        }
    }
}
