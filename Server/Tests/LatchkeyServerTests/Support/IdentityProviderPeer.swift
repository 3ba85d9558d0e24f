import Crypto
import Foundation
import LatchkeyServer
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `Tests/interop/idp_peer.py`, a local stand-in for Apple's Sign in with Apple endpoints and a Clerk
/// issuer, which `scripts/test` starts and names in `LATCHKEY_TEST_IDP_URL`. Real HTTP, never a mock
/// inside the process.
enum IdentityProviderPeer {
    static var url: String? {
        ProcessInfo.processInfo.environment["LATCHKEY_TEST_IDP_URL"].flatMap { $0.isEmpty ? nil : $0 }
    }

    static var isAvailable: Bool { self.url != nil }

    static let skipReason: Comment =
        "LATCHKEY_TEST_IDP_URL is not set, so there is no Apple/Clerk peer to test against (scripts/test starts Tests/interop/idp_peer.py)"

    static let appClientID = "com.example.app"
    static let webClientID = "com.example.web"
    static let appleSubject = "001234.abcdef0123456789.0123"
    static let clerkParty = "https://app.example.com"

    static func base() throws -> String {
        guard let url = self.url else { throw TestFailure("LATCHKEY_TEST_IDP_URL is not set") }
        return url
    }

    static func call(_ method: String, _ path: String, json: [String: Any]? = nil) async throws -> [String: Any] {
        var request = URLRequest(url: URL(string: try self.base() + path)!)
        request.httpMethod = method
        if let json {
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.httpBody = try JSONSerialization.data(withJSONObject: json)
        }
        let (data, response) = try await URLSession.shared.data(for: request)
        guard (response as? HTTPURLResponse)?.statusCode == 200 else {
            throw TestFailure(
                "idp peer \(method) \(path): \((response as? HTTPURLResponse)?.statusCode ?? 0) \(String(decoding: data, as: UTF8.self))")
        }
        if data.isEmpty { return [:] }
        return try JSONSerialization.jsonObject(with: data) as? [String: Any] ?? [:]
    }

    /// An Apple identity token; `claims` override the peer's defaults (pass `iat`/`exp` from the test clock).
    static func appleToken(
        claims: [String: Any], omit: [String] = [], signWith: String = "apple-1", kid: String?? = .none, alg: String = "RS256"
    ) async throws -> String {
        var body: [String: Any] = ["claims": claims, "omit": omit, "sign_with": signWith, "alg": alg]
        if case .some(let kid) = kid { body["kid"] = kid ?? NSNull() }
        return try await self.call("POST", "/test/mint/apple", json: body)["token"] as! String
    }

    /// A Clerk session token.
    static func clerkToken(claims: [String: Any], omit: [String] = [], signWith: String = "clerk-1", type: String? = nil) async throws -> String {
        var body: [String: Any] = ["claims": claims, "omit": omit, "sign_with": signWith]
        if let type { body["typ"] = type }
        return try await self.call("POST", "/test/mint/clerk", json: body)["token"] as! String
    }

    static func registerCode(_ code: String, subject: String, clientID: String = appClientID) async throws {
        _ = try await self.call("POST", "/test/codes", json: ["code": code, "sub": subject, "client_id": clientID])
    }

    /// The refresh tokens Apple's `/auth/revoke` has been asked to revoke that the peer issued for `subject`.
    static func revokedTokens(of subject: String) async throws -> [String] {
        let revoked = try await self.call("GET", "/test/revoked")["revoked"] as? [[String: Any]] ?? []
        return revoked.filter { $0["sub"] as? String == subject && $0["known"] as? Bool == true }.compactMap { $0["token"] as? String }
    }

    /// How often the JWKS was fetched through URLs tagged `tag` (each test server gets its own tag).
    static func fetches(tag: String) async throws -> Int {
        try await self.call("GET", "/test/stats?tag=\(tag)")["tag_fetches"] as? Int ?? -1
    }

    static func developerKey() async throws -> (teamID: String, keyID: String, pem: String) {
        let key = try await self.call("GET", "/test/developer-key")
        return (key["team_id"] as! String, key["key_id"] as! String, key["private_key_pem"] as! String)
    }

    static func sha256Hex(_ text: String) -> String {
        SHA256.hash(data: Data(text.utf8)).map { String(format: "%02x", $0) }.joined()
    }
}

extension TestServer {
    /// A server with Sign in with Apple (client IDs `com.example.app`, `com.example.web`, with the peer's
    /// developer key) and the provider `clerk` pointed at the peer; `tag` names its JWKS fetches.
    static func federated(
        tag: String = UUID().uuidString, clock: ManualClock = ManualClock(), configure: (inout LatchkeyConfiguration) -> Void = { _ in }
    ) async throws -> TestServer {
        let base = try IdentityProviderPeer.base()
        let key = try await IdentityProviderPeer.developerKey()
        return try await TestServer.make(clock: clock) { configuration in
            configuration.apple.clientIDs = [IdentityProviderPeer.appClientID, IdentityProviderPeer.webClientID]
            configuration.apple.jwksURL = "\(base)/auth/keys?tag=\(tag)"
            configuration.apple.tokenURL = "\(base)/auth/token"
            configuration.apple.revokeURL = "\(base)/auth/revoke"
            (configuration.apple.teamID, configuration.apple.keyID, configuration.apple.privateKeyPEM) = key
            var clerk = IdentityProviderConfiguration(
                name: "clerk", issuer: "\(base)/clerk", jwksURL: "\(base)/clerk/.well-known/jwks.json?tag=\(tag)-clerk")
            clerk.authorizedParties = [IdentityProviderPeer.clerkParty]
            clerk.acceptsAnyAudience = true  // Clerk's session tokens carry no aud: azp is checked instead
            configuration.identityProviders = [clerk]
            configure(&configuration)
        }
    }

    /// Default Apple claims for this server's clock: issued now, valid ten minutes, with the nonce's hash.
    func appleClaims(rawNonce: String, subject: String = IdentityProviderPeer.appleSubject, _ extra: [String: Any] = [:]) -> [String: Any] {
        let now = Int(self.clock.now().timeIntervalSince1970)
        return ["iat": now, "exp": now + 600, "auth_time": now, "sub": subject, "nonce": IdentityProviderPeer.sha256Hex(rawNonce)]
            .merging(extra) { $1 }
    }

    /// Clerk claims for this server's clock.
    func clerkClaims(subject: String = "user_\(UUID().uuidString.prefix(8))", _ extra: [String: Any] = [:]) -> [String: Any] {
        let now = Int(self.clock.now().timeIntervalSince1970)
        return ["iat": now, "nbf": now - 5, "exp": now + 60, "sub": subject].merging(extra) { $1 }
    }
}
