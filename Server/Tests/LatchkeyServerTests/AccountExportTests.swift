import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyServer
import Testing

/// `GET /api/v1/users/me/export`: everything stored about the user, never a token, secret or hash of one.
@Suite struct AccountExportTests {
    static let path = "/api/v1/users/me/export"

    @Test(arguments: Transport.allCases)
    func theExportHoldsTheUsersDataUnderThePinnedKeys(transport: Transport) async throws {
        try await withServer(transport) { client, server in
            let first = try await client.registerDevice()
            server.clock.advance(by: 1)
            let second = try await client.registerAgain(first)
            #expect(try await client.send(.post, "/api/v1/auth/logout", bearer: second.accessToken).status == .ok)
            _ = try await server.services.budgets.setLimit(ofUser: first.userID, to: 50)
            _ = try await server.services.budgets.recordUsage(userID: first.userID, amount: 3, idempotencyKey: "k-1")
            let actor = AuditActor(name: "cli:support", source: "cli on test")
            try await server.services.audit.record(actor, "user.budget.set", target: "user \(first.userID)", details: "limit 50")
            try await server.services.audit.record(actor, "session.revoke", target: "session \(second.sessionID)")
            let stranger = try await client.registerDevice()
            try await server.services.audit.record(actor, "user.budget.set", target: "user \(stranger.userID)", details: "limit 1")

            let response = try await client.send(.get, Self.path, bearer: first.accessToken)
            #expect(response.status == .ok)
            #expect(response.headers[.contentType]?.hasPrefix("application/json") == true)
            #expect(response.headers[.cacheControl] == "no-store")
            let object = try #require(try JSONSerialization.jsonObject(with: Data(response.body.readableBytesView)) as? [String: Any])
            #expect(Set(["user", "identities", "devices", "sessions", "budget", "usage", "audit_events"]).isSubset(of: Set(object.keys)))

            let export = try response.decode(AccountExport.self)
            #expect(export.user.id == first.userID)
            #expect(export.user.kind == .device)
            #expect(export.devices.map(\.id) == [first.userID])
            #expect(export.sessions.map(\.id) == [second.sessionID, first.sessionID])
            #expect(export.sessions.first?.endReason == "logout")
            #expect(export.sessions.last?.endedAt == nil)
            #expect(export.budget.limit == 50)
            #expect(export.budget.used == 3)
            #expect(export.usage.map(\.idempotencyKey) == ["k-1"])
            #expect(export.auditEvents.map(\.target) == ["session \(second.sessionID)", "user \(first.userID)"])
            let text = response.text
            for secret in [first.accessToken, first.refreshToken, second.refreshToken, try #require(first.deviceSecret)] {
                #expect(!text.contains(secret))
            }
            for column in ["secret_hash", "token_hash", "password_hash", "sealed", "thumbprint"] { #expect(!text.contains(column)) }
        }
    }

    @Test func anEmailAccountsAddressIsExportedButNotItsPasswordHash() async throws {
        try await withMailServer { client, server, peer in
            let email = newAddress()
            let session = try await client.verifiedAccount(email, "correct horse battery staple", peer: peer)
            let response = try await client.send(.get, Self.path, bearer: session.accessToken)
            #expect(response.status == .ok)
            let export = try response.decode(AccountExport.self)
            #expect(export.user.email == email)
            #expect(export.user.emailVerified == true)
            #expect(export.sessions.first?.method == "password")
            #expect(!response.text.contains("argon2"))
            #expect(!response.text.contains(session.refreshToken))
        }
    }

    @Test func aSessionThatIsNotRecentIs403ReauthenticationRequired() async throws {
        try await withServer(.router) { client, server in
            let first = try await client.registerDevice()
            server.clock.advance(by: 700)  // past tokens.recent-authentication (600 s)
            let refreshed = try await client.refresh(first.refreshToken).decode(TokenPairResponse.self)
            let response = try await client.send(.get, Self.path, bearer: refreshed.accessToken)
            #expect(response.status == .forbidden)
            #expect(response.envelope?.error.code == .reauthenticationRequired)
        }
    }

    @Test func aGuestTokenIs403() async throws {
        try await withServer(.router) { client, server in
            let guest = try await client.send(.post, "/api/v1/auth/guest", headers: [HTTPField.Name("X-Device-ID")!: UUID().uuidString])
            let token = try guest.decode(GuestSessionResponse.self).accessToken
            let response = try await client.send(.get, Self.path, bearer: token)
            #expect(response.status == .forbidden)
            #expect(response.envelope?.error.code == .forbidden)
        }
    }

    @Test func withoutABearerIs401() async throws {
        try await withServer(.router) { client, server in
            expectUnauthorized(try await client.send(.get, Self.path))
        }
    }
}
