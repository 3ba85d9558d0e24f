import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyServer

/// The backend API as an app's server calls it, and what its tests read back.
enum Backend {
    static let key = "test-backend-key-0123456789abcdef"

    /// `configure` for a server with the single backend key.
    static func configure(_ configuration: inout LatchkeyConfiguration) { configuration.backend.serviceKey = Self.key }

    static func path(_ userID: String, _ action: String = "") -> String {
        "/api/v1/backend/users/\(userID)" + (action.isEmpty ? "" : "/" + action)
    }

    /// The JSON object of an access token's payload, every claim included.
    static func payload(of accessToken: String) throws -> [String: Any] {
        let parts = accessToken.split(separator: ".")
        guard parts.count == 3, let data = Base64URL.decode(parts[1]),
            let object = try JSONSerialization.jsonObject(with: data) as? [String: Any]
        else { throw TestFailure("not a JWT") }
        return object
    }

    /// The backend's answer about a user as JSON.
    static func object(_ response: TestResponse) throws -> [String: Any] {
        try JSONSerialization.jsonObject(with: Data(response.body.readableBytesView)) as? [String: Any] ?? [:]
    }
}
