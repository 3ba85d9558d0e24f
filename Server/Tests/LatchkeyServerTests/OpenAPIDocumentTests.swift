import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyServer
import Testing

/// The served OpenAPI document is built from the routes themselves. These tests hold it to that: the router's routes and
/// the document's operations are the same list, every operation answers with a documented status and body, the types'
/// enums reach the document, and the answer checker every other test runs through (``DocumentedAnswers``) catches drift.
@Suite struct OpenAPIDocumentTests {
    /// `METHOD /path` of every operation in a document (`{name}` for a path parameter).
    static func documentedOperations(_ document: [String: Any]) -> [String: Set<String>] {
        var operations: [String: Set<String>] = [:]
        for (path, item) in document["paths"] as? [String: [String: Any]] ?? [:] {
            for (method, operation) in item {
                guard let responses = (operation as? [String: Any])?["responses"] as? [String: Any] else { continue }
                operations["\(method.uppercased()) \(path)"] = Set(responses.keys.filter { $0 != "default" })
            }
        }
        return operations
    }

    static func served(_ document: TestResponse) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(document.body.readableBytesView)) as? [String: Any])
    }

    /// The router's own route list (Hummingbird's `Router.routes`), in the document's path form.
    static func routes(of server: TestServer) -> Set<String> {
        Set(
            buildRouter(services: server.services).routes.map { route in
                let path = route.path.description.split(separator: "/", omittingEmptySubsequences: false).map { segment in
                    segment.hasPrefix(":") ? "{\(segment.dropFirst())}" : String(segment)
                }.joined(separator: "/")
                return "\(route.method.rawValue) \(path.hasPrefix("/") ? path : "/" + path)"
            })
    }

    @Test func everyRouteTheRouterServesIsDocumentedAndNothingElse() async throws {
        let server = try await TestServer.make()
        let routes = Self.routes(of: server)
        try await server.test(.router) { client in
            let response = try await client.send(.get, "/openapi.json")
            #expect(response.status == .ok)
            let document = try Self.served(response)
            #expect(document["openapi"] as? String == "3.0.3")
            let documented = Set(Self.documentedOperations(document).keys)
            #expect(documented.subtracting(routes).isEmpty, "documented, not served: \(documented.subtracting(routes).sorted())")
            #expect(routes.subtracting(documented).isEmpty, "served, not documented: \(routes.subtracting(documented).sorted())")
            // Forward auth answers every method a proxy may send, and the document says so.
            for method in ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"] { #expect(documented.contains("\(method) /api/v1/authorize")) }
            #expect(routes.count >= 20)
        }
    }

    @Test func withMetricsOnTheirOwnPortTheMainDocumentHasNoMetricsRoute() async throws {
        let server = try await TestServer.make { $0.metricsPort = 0 }
        let routes = Self.routes(of: server)
        #expect(!routes.contains("GET /metrics"))
        try await server.test(.router) { client in
            let documented = Set(Self.documentedOperations(try Self.served(try await client.send(.get, "/openapi.json"))).keys)
            #expect(documented == routes)
        }
    }

    @Test func everyDocumentedOperationAnswersWithADocumentedStatus() async throws {
        try await withServer(.live) { client, _ in
            let document = try Self.served(try await client.send(.get, "/openapi.json"))
            for (operation, statuses) in Self.documentedOperations(document) {
                let parts = operation.split(separator: " ")
                let method = HTTPRequest.Method(String(parts[0]))!
                let path = String(parts[1]).replacingOccurrences(of: "{provider}", with: "apple")
                    .replacingOccurrences(of: "{factor_id}", with: UUID().uuidString.lowercased())
                    .replacingOccurrences(of: "{id}", with: UUID().uuidString.lowercased())
                // `send` checks status, headers and body against the document too.
                let answer = try await client.send(method, path, json: method == .post ? "{}" : nil)
                #expect(statuses.contains(String(answer.status.code)), "\(operation) answered \(answer.status.code), documented: \(statuses)")
                if method != .head { #expect(answer.headers[.contentType] != nil, "\(operation) has no content type") }
            }
        }
    }

    /// The document's schemas come from the Codable types: every token kind `validate-token` can answer is in its enum
    /// (the hand-kept document lacked `external`), every error code in the envelope's.
    @Test func theTypesEnumsAreTheDocumentsEnums() async throws {
        try await withServer(.router) { client, _ in
            let document = try Self.served(try await client.send(.get, "/openapi.json"))
            let schemas = try #require((document["components"] as? [String: Any])?["schemas"] as? [String: [String: Any]])
            func enumValues(_ schema: String, _ property: String) -> Set<String> {
                let properties = schemas[schema]?["properties"] as? [String: [String: Any]]
                return Set(properties?[property]?["enum"] as? [String] ?? [])
            }
            #expect(enumValues("ValidateTokenResponse", "kind") == Set(TokenKind.allCases.map(\.rawValue)))
            #expect(enumValues("ValidateTokenResponse", "kind").contains("external"))
            let error = try #require(schemas["ErrorEnvelope"])
            #expect(error["properties"] != nil)
        }
    }

    /// The checker every test's answers go through finds a missing status, a missing field, an extra field, a wrong type
    /// and an undocumented header — else it could not fail.
    @Test func theAnswerCheckerFindsEachKindOfDrift() async throws {
        let server = try await TestServer.make()
        let data = try apiDocument(of: buildAPI(services: server.services).operations)
        await server.close()
        let document = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let checker = DocumentedAnswers(document: document)
        let json: HTTPFields = [.contentType: "application/json"]
        let health = Data(#"{"status":"ok","version":"0.1.0"}"#.utf8)
        #expect(checker.problems(.get, "/api/v1/health", status: 200, headers: json, body: health).isEmpty)
        #expect(!checker.problems(.get, "/api/v1/health", status: 418, headers: json, body: health).isEmpty)
        #expect(!checker.problems(.get, "/api/v1/health", status: 200, headers: json, body: Data(#"{"status":"ok"}"#.utf8)).isEmpty)
        #expect(
            !checker.problems(.get, "/api/v1/health", status: 200, headers: json, body: Data(#"{"status":"ok","version":"1","extra":1}"#.utf8))
                .isEmpty)
        #expect(!checker.problems(.get, "/api/v1/health", status: 200, headers: json, body: Data(#"{"status":1,"version":"1"}"#.utf8)).isEmpty)
        var limited = json
        limited[HTTPField.Name("X-RateLimit-Limit")!] = "10"
        #expect(!checker.problems(.get, "/api/v1/health", status: 200, headers: limited, body: health).isEmpty)
        #expect(!checker.problems(.put, "/api/v1/health", status: 200, headers: json, body: health).isEmpty)
        #expect(!checker.problems(.get, "/api/v1/not-documented", status: 200, headers: json, body: health).isEmpty)
        #expect(checker.problems(.get, "/api/v1/not-documented", status: 404, headers: json, body: Data()).isEmpty)
        // An unexpected fault is the documented default: a 500 with the envelope, nothing else.
        let fault = Data(#"{"error":{"code":"internal_error","message":"An internal error occurred."}}"#.utf8)
        #expect(checker.problems(.get, "/api/v1/health", status: 500, headers: json, body: fault).isEmpty)
        #expect(!checker.problems(.get, "/api/v1/health", status: 502, headers: json, body: fault).isEmpty)
        // A path parameter matches any segment; the error envelope's shape is checked like any body.
        let envelope = Data(#"{"error":{"code":"not_found","message":"No apple identity is linked to this account."}}"#.utf8)
        #expect(checker.problems(.delete, "/api/v1/users/me/identities/apple", status: 404, headers: json, body: envelope).isEmpty)
        #expect(!checker.problems(.delete, "/api/v1/users/me/identities/apple", status: 404, headers: json, body: health).isEmpty)
    }
}
