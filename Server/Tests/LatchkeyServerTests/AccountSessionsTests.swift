import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyServer
import SQLKit
import Testing

/// "Where you're signed in": `GET /api/v1/users/me/sessions` and `DELETE /api/v1/users/me/sessions/{id}`.
@Suite struct AccountSessionsTests {
    static let path = "/api/v1/users/me/sessions"

    static func sessions(_ token: String, _ client: some TestClientProtocol) async throws -> [AccountSession] {
        let response = try await client.send(.get, Self.path, bearer: token)
        #expect(response.status == .ok)
        return try response.decode(AccountSessionsResponse.self).sessions
    }

    /// `YYYY-MM-DD` of the server's clock now.
    static func today(_ server: TestServer) -> String {
        server.clock.now().formatted(Date.ISO8601FormatStyle(timeZone: TimeZone(identifier: "UTC")!).year().month().day().dateSeparator(.dash))
    }

    @Test(arguments: Transport.allCases)
    func listsTheLiveSessionsNewestFirstWithTheCallersMarkedCurrent(transport: Transport) async throws {
        try await withServer(transport) { client, server in
            let first = try await client.registerDevice()
            server.clock.advance(by: 5)
            let second = try await client.registerAgain(first)
            let response = try await client.send(.get, Self.path, bearer: first.accessToken)
            #expect(response.status == .ok)
            #expect(response.headers[.contentType]?.hasPrefix("application/json") == true)
            let listed = try response.decode(AccountSessionsResponse.self).sessions
            #expect(listed.map(\.id) == [second.sessionID, first.sessionID])
            #expect(listed.map(\.current) == [false, true])
            #expect(listed.allSatisfy { $0.deviceID == first.userID && $0.method == "device" && $0.lastUsedAt == Self.today(server) })
            #expect(listed.last?.createdAt == server.clock.now().addingTimeInterval(-5))
            // The wire form: the names the issue pins, dates ISO 8601 and the last use a day.
            let object = try #require(try JSONSerialization.jsonObject(with: Data(response.body.readableBytesView)) as? [String: Any])
            let entry = try #require((object["sessions"] as? [[String: Any]])?.last)
            #expect(Set(entry.keys) == ["id", "device_id", "method", "created_at", "last_used_at", "current"])
            #expect((entry["created_at"] as? String)?.hasSuffix("Z") == true)
            #expect((entry["last_used_at"] as? String)?.count == 10)
        }
    }

    @Test func aPasswordSessionHasNoDeviceAndSaysHowItBegan() async throws {
        try await withMailServer { client, server, peer in
            let session = try await client.verifiedAccount(newAddress(), "correct horse battery staple", peer: peer)
            let response = try await client.send(.get, Self.path, bearer: session.accessToken)
            #expect(response.status == .ok)
            let object = try #require(try JSONSerialization.jsonObject(with: Data(response.body.readableBytesView)) as? [String: Any])
            let entry = try #require((object["sessions"] as? [[String: Any]])?.first)
            #expect(entry["device_id"] is NSNull)
            #expect(entry["method"] as? String == "password")
            #expect(entry["current"] as? Bool == true)
        }
    }

    @Test func lastUsedIsTheDayOfTheLatestRefresh() async throws {
        try await withServer(.router) { client, server in
            let first = try await client.registerDevice()
            let created = Self.today(server)
            #expect(try await Self.sessions(first.accessToken, client).map(\.lastUsedAt) == [created])
            server.clock.advance(by: 3 * 86_400)
            let refreshed = try await client.refresh(first.refreshToken).decode(TokenPairResponse.self)
            let listed = try await Self.sessions(refreshed.accessToken, client)
            #expect(listed.map(\.lastUsedAt) == [Self.today(server)])
            #expect(Self.today(server) != created)
        }
    }

    @Test func aSessionStoredWithoutAMethodIsToldByItsAMR() async throws {
        try await withServer(.router) { client, server in
            let device = try await client.registerDevice()
            let other = try await client.registerAgain(device)
            try await server.services.database.transaction { sql in
                try await sql.raw("UPDATE sessions SET method = NULL, last_used_at = NULL").run()
                try await sql.raw("UPDATE sessions SET amr = 'apple' WHERE id = \(bind: other.sessionID)").run()
            }
            let listed = try await Self.sessions(device.accessToken, client)
            #expect(Dictionary(uniqueKeysWithValues: listed.map { ($0.id, $0.method) }) == [device.sessionID: "device", other.sessionID: "apple"])
            #expect(listed.allSatisfy { $0.lastUsedAt == Self.today(server) })
        }
    }

    @Test(arguments: [
        ("device hwk", "device"), ("pwd otp", "password"), ("apple", "apple"), ("google", "google"), ("hwk user", "passkey"),
        ("hwk", "passkey"), ("access_code", "access_code"), ("fed", "federated"), ("email", "email"),
    ])
    func theMethodOfAnOlderSessionFollowsTheFirstEntryOfItsAMR(amr: String, method: String) async throws {
        try await withServer(.router) { client, server in
            let device = try await client.registerDevice()
            try await server.services.database.transaction { sql in
                try await sql.raw("UPDATE sessions SET method = NULL, amr = \(bind: amr)").run()
            }
            #expect(try await Self.sessions(device.accessToken, client).map(\.method) == [method])
        }
    }

    @Test func endedSessionsAreNotListed() async throws {
        try await withServer(.router) { client, server in
            let first = try await client.registerDevice()
            let second = try await client.registerAgain(first)
            #expect(try await client.send(.post, "/api/v1/auth/logout", bearer: second.accessToken).status == .ok)
            #expect(try await Self.sessions(first.accessToken, client).map(\.id) == [first.sessionID])
        }
    }

    @Test func aSessionWhoseRefreshTokenExpiredIsNotListed() async throws {
        try await withServer(.router, configure: { $0.tokens.refreshLifetime = 3600 }) { client, server in
            let first = try await client.registerDevice()
            server.clock.advance(by: 3000)
            let second = try await client.registerAgain(first)
            server.clock.advance(by: 700)
            #expect(try await Self.sessions(second.accessToken, client).map(\.id) == [second.sessionID])
            let ended = try await client.send(.delete, Self.path + "/" + first.sessionID, bearer: second.accessToken)
            #expect(ended.status == .notFound)
        }
    }

    @Test func anotherUsersSessionsAreNeitherListedNorEnded() async throws {
        try await withServer(.router) { client, server in
            let mine = try await client.registerDevice()
            let theirs = try await client.registerDevice()
            #expect(try await Self.sessions(mine.accessToken, client).map(\.id) == [mine.sessionID])
            let response = try await client.send(.delete, Self.path + "/" + theirs.sessionID, bearer: mine.accessToken)
            #expect(response.status == .notFound)
            #expect(response.envelope?.error.code == .notFound)
            try await expectAccepted(theirs.accessToken, by: client)
            #expect(try await client.refresh(theirs.refreshToken).status == .ok)
        }
    }

    @Test(arguments: Transport.allCases)
    func endingASessionRefusesItsTokensAndKeepsTheOthers(transport: Transport) async throws {
        try await withServer(transport) { client, server in
            let first = try await client.registerDevice()
            let second = try await client.registerAgain(first)
            try await expectAccepted(second.accessToken, by: client)
            let response = try await client.send(.delete, Self.path + "/" + second.sessionID, bearer: first.accessToken)
            #expect(response.status == .noContent)
            #expect(response.body.readableBytes == 0)
            try await expectRefused(second.accessToken, by: client)
            expectUnauthorized(try await client.refresh(second.refreshToken), code: .invalidGrant)
            try await expectAccepted(first.accessToken, by: client)
            #expect(try await Self.sessions(first.accessToken, client).map(\.id) == [first.sessionID])
        }
    }

    @Test func theCallersOwnSessionMayBeEnded() async throws {
        try await withServer(.router) { client, server in
            let first = try await client.registerDevice()
            let response = try await client.send(.delete, Self.path + "/" + first.sessionID.uppercased(), bearer: first.accessToken)
            #expect(response.status == .noContent)
            try await expectRefused(first.accessToken, by: client)
            expectUnauthorized(try await client.refresh(first.refreshToken), code: .invalidGrant)
        }
    }

    @Test(arguments: ["ended", "not-a-uuid", "00000000-0000-0000-0000-000000000000"])
    func anIDThatIsNotALiveSessionOfTheCallerIs404AndChangesNothing(id: String) async throws {
        try await withServer(.router) { client, server in
            let first = try await client.registerDevice()
            let second = try await client.registerAgain(first)
            let ended = try await client.registerAgain(first)
            #expect(try await client.send(.post, "/api/v1/auth/logout", bearer: ended.accessToken).status == .ok)
            let target = id == "ended" ? ended.sessionID : id
            let response = try await client.send(.delete, Self.path + "/" + target, bearer: first.accessToken)
            #expect(response.status == .notFound)
            #expect(response.envelope?.error.code == .notFound)
            try await expectAccepted(first.accessToken, by: client)
            try await expectAccepted(second.accessToken, by: client)
        }
    }

    @Test func aGuestTokenListsNoneAndEndsNone() async throws {
        try await withServer(.router) { client, server in
            let device = try await client.registerDevice()
            let guest = try await GuestTests.startGuest(client, deviceID: UUID().uuidString).decode(GuestSessionResponse.self)
            #expect(try await Self.sessions(guest.accessToken, client).isEmpty)
            let response = try await client.send(.delete, Self.path + "/" + device.sessionID, bearer: guest.accessToken)
            #expect(response.status == .notFound)
            try await expectAccepted(device.accessToken, by: client)
        }
    }

    @Test func withoutABearerBothAre401() async throws {
        try await withServer(.router) { client, server in
            let first = try await client.registerDevice()
            expectUnauthorized(try await client.send(.get, Self.path))
            expectUnauthorized(try await client.send(.delete, Self.path + "/" + first.sessionID))
            try await expectAccepted(first.accessToken, by: client)
        }
    }

    @Test func endingASessionTellsItsSocketsSessionRevokedForALogout() async throws {
        let server = try await TestServer.make()
        try await server.test(.live) { client in
            let first = try await client.registerDevice()
            let second = try await client.registerAgain(first)
            let socket = try await EventSocketClient.open(port: client.port!, token: second.accessToken)
            #expect(try await socket.next().type == "connected")
            #expect(try await client.send(.delete, Self.path + "/" + second.sessionID, bearer: first.accessToken).status == .noContent)
            let revoked = try await socket.next()
            #expect(revoked.type == "session.revoked")
            #expect(revoked.reason == "logout")
            #expect(try await socket.closeCode() == 4001)
        }
    }
}

/// Ending a session on one process: the other refuses its access token (the revocation feed, PostgreSQL).
@Suite(.enabled(if: TestPostgres.isAvailable, TestPostgres.skipReason))
struct AccountSessionsMultiProcessTests {
    @Test func anotherProcessRefusesTheEndedSessionsAccessToken() async throws {
        try await MultiProcessTests.withServers(environment: ["LATCHKEY_REVOCATIONS_POLL_INTERVAL": "0.2"]) { servers, _ in
            let (a, b) = (servers[0], servers[1])
            let first = try await a.registerDevice()
            let second = try await a.send(
                "POST", "api/v1/auth/register-device", json: #"{"device_id":"\#(first.userID)","device_secret":"\#(first.deviceSecret!)"}"#)
            let pair = try JSONDecoder().decode(TokenPairResponse.self, from: second.body)
            #expect(try await b.send("GET", "api/v1/validate-token", bearer: pair.accessToken).status == 200)
            #expect(try await a.send("DELETE", "api/v1/users/me/sessions/\(pair.sessionID)", bearer: first.accessToken).status == 204)
            try await MultiProcessTests.eventually(within: .seconds(5), "B refusing the ended session's access token") {
                try await b.send("GET", "api/v1/validate-token", bearer: pair.accessToken).status == 401
            }
        }
    }
}
