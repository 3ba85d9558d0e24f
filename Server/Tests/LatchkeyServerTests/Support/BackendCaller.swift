import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyServer
import SQLKit
import Testing

/// The app's own server calling `/api/v1/backend/users/{id}` with a service key (`Authorization: Bearer`).
enum BackendCaller {
    static let key = "backend-service-key-for-tests-0123456789abcdef"
    static let path = "/api/v1/backend/users"

    static func configure(_ configuration: inout LatchkeyConfiguration) {
        configuration.backend.serviceKey = Self.key
    }
}

extension TestClientProtocol {
    /// A backend call on user `userID` (`action`: `revoke-sessions`, `disable`, `enable`, `refresh-claims`, or none).
    func backendCall(
        _ method: HTTPRequest.Method, _ userID: String, _ action: String? = nil, key: String? = BackendCaller.key, json: String? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> TestResponse {
        let uri = "\(BackendCaller.path)/\(userID)" + (action.map { "/\($0)" } ?? "")
        return try await self.send(method, uri, bearer: key, json: json, sourceLocation: sourceLocation)
    }

    /// `GET` of the user as a JSON object.
    func backendProfile(_ userID: String, key: String = BackendCaller.key) async throws -> [String: Any] {
        let answer = try await self.backendCall(.get, userID, key: key)
        guard answer.status == .ok else { throw TestFailure("GET backend user answered \(answer.status): \(answer.text)") }
        return try #require(try JSONSerialization.jsonObject(with: Data(answer.body.readableBytesView)) as? [String: Any])
    }
}

/// The payload of a JWT as a JSON object (every claim, the ones the wire types do not name too).
func allClaims(of token: String) throws -> [String: Any] {
    let jwt = try CompactJWT(token)
    guard let data = Base64URL.decode(jwt.payload) else { throw TestFailure("payload is not base64url") }
    return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
}

extension TestServer {
    /// The `actor`, `action`, `source` and `details` of every audit row, oldest first, as one line each.
    func auditRowLines() async throws -> [String] {
        try await self.services.database.read { sql in
            try await sql.raw("SELECT actor, action, target, source, details FROM audit_events ORDER BY id").all().map { row in
                [
                    try row.decode(column: "actor", as: String.self), try row.decode(column: "action", as: String.self),
                    try row.decode(column: "target", as: String.self), try row.decode(column: "source", as: String.self),
                    try row.decode(column: "details", as: String?.self) ?? "",
                ].joined(separator: " | ")
            }
        }
    }
}
