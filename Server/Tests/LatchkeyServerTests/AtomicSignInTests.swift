import Foundation
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyServer
import SQLKit
import Testing

/// A sign-in through an identity provider is one transaction: a failure after the user row is written leaves no user,
/// no identity, no session, and the Apple nonce unspent, so the same sign-in goes through once the fault is gone.
@Suite(.enabled(if: IdentityProviderPeer.isAvailable, IdentityProviderPeer.skipReason))
struct AtomicSignInTests {
    typealias Peer = IdentityProviderPeer

    /// Makes every insert into `sessions` fail (the last write of a sign-in, after the user and identity rows), or stops that.
    static func failSessionInserts(_ fail: Bool, on server: TestServer) async throws {
        let statements: [String] =
            switch (server.services.database.dialect, fail) {
            case (.sqlite, true):
                ["CREATE TRIGGER injected_fault BEFORE INSERT ON sessions BEGIN SELECT RAISE(ABORT, 'injected fault'); END"]
            case (.sqlite, false): ["DROP TRIGGER injected_fault"]
            case (.postgresql, true):
                [
                    "CREATE FUNCTION injected_fault() RETURNS trigger AS $$ BEGIN RAISE EXCEPTION 'injected fault'; END $$ LANGUAGE plpgsql",
                    "CREATE TRIGGER injected_fault BEFORE INSERT ON sessions FOR EACH ROW EXECUTE FUNCTION injected_fault()",
                ]
            case (.postgresql, false): ["DROP TRIGGER injected_fault ON sessions", "DROP FUNCTION injected_fault()"]
            }
        try await server.services.database.transaction { sql in
            for statement in statements { try await sql.raw(SQLQueryString(statement)).run() }
        }
    }

    static func count(_ table: String, on server: TestServer) async throws -> Int {
        try await server.services.database.read { sql in
            try await sql.raw("SELECT COUNT(*) AS n FROM \(unsafeRaw: table)").first()?.decode(column: "n", as: Int.self) ?? -1
        }
    }

    @Test func anAppleSignInThatFailsAfterTheUserRowLeavesNothingAndTheNonceUnspent() async throws {
        let server = try await TestServer.federated()
        try await server.test(.router) { client in
            let nonce = UUID().uuidString
            let token = try await Peer.appleToken(claims: server.appleClaims(rawNonce: nonce, subject: "atomic.\(UUID().uuidString)"))
            let request = AppleSignInRequest(identityToken: token, rawNonce: nonce)
            try await Self.failSessionInserts(true, on: server)
            let failed = try await client.send(.post, "/api/v1/auth/apple", body: request)
            #expect(failed.status.code >= 500, "\(failed.text)")
            #expect(failed.envelope != nil)
            for table in ["users", "identities", "sessions", "used_nonces"] {
                #expect(try await Self.count(table, on: server) == 0, "\(table) kept a row of the failed sign-in")
            }
            try await Self.failSessionInserts(false, on: server)
            // The nonce was not spent: the very same request now signs in, and creates the user (none was left behind).
            let retried = try await client.send(.post, "/api/v1/auth/apple", body: request)
            #expect(retried.status == .created, "\(retried.text)")
            #expect(try await Self.count("users", on: server) == 1)
            // …and only once.
            #expect(try await client.send(.post, "/api/v1/auth/apple", body: request).envelope?.error.code == .invalidToken)
        }
    }

    @Test func aTokenExchangeThatFailsAfterTheUserRowLeavesNoUser() async throws {
        let server = try await TestServer.federated()
        try await server.test(.router) { client in
            let clerk = try await Peer.clerkToken(claims: server.clerkClaims(subject: "user_\(UUID().uuidString.prefix(12))"))
            try await Self.failSessionInserts(true, on: server)
            let failed = try await client.send(.post, "/api/v1/auth/token-exchange", body: TokenExchangeRequest(subjectToken: clerk))
            #expect(failed.status.code >= 500, "\(failed.text)")
            for table in ["users", "identities", "sessions"] {
                #expect(try await Self.count(table, on: server) == 0, "\(table) kept a row of the failed exchange")
            }
            try await Self.failSessionInserts(false, on: server)
            let retried = try await client.send(.post, "/api/v1/auth/token-exchange", body: TokenExchangeRequest(subjectToken: clerk))
            #expect(retried.status == .ok, "\(retried.text)")
            #expect(try await Self.count("users", on: server) == 1)
        }
    }

    @Test func aLinkThatFailsLeavesTheAppleIDFree() async throws {
        let server = try await TestServer.federated()
        try await server.test(.router) { client in
            let device = try await client.registerDevice()
            let subject = "atomic-link.\(UUID().uuidString)"
            let nonce = UUID().uuidString
            let request = AppleSignInRequest(
                identityToken: try await Peer.appleToken(claims: server.appleClaims(rawNonce: nonce, subject: subject)), rawNonce: nonce)
            try await Self.failSessionInserts(true, on: server)
            let failed = try await client.send(.post, "/api/v1/auth/apple", bearer: device.accessToken, body: request)
            #expect(failed.status.code >= 500, "\(failed.text)")
            #expect(try await Self.count("identities", on: server) == 0)
            try await Self.failSessionInserts(false, on: server)
            let linked = try await client.send(.post, "/api/v1/auth/apple", bearer: device.accessToken, body: request)
            #expect(linked.status == .ok, "\(linked.text)")
            #expect(try linked.decode(TokenPairResponse.self).userID == device.userID)
        }
    }
}
