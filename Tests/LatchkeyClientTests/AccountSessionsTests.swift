import Foundation
import LatchkeyAPI
import Testing

@testable import LatchkeyClient

/// `sessions()`, `endSession(id:)` and `exportAccount()` against a stubbed transport.
@Suite struct AccountSessionsTests {
    static let listed = AccountSession(
        id: "session-2", deviceID: nil, method: "password", createdAt: Date(timeIntervalSince1970: 1_800_000_000), lastUsedAt: "2027-01-15",
        current: false)

    @Test func theSessionsAreReadWithTheBearer() async throws {
        let fixture = Fixture { _ in .json(200, AccountSessionsResponse(sessions: [Self.listed])) }
        try fixture.storeSession()
        #expect(try await fixture.session().sessions() == [Self.listed])
        let sent = try #require(fixture.transport.requests.first)
        #expect(sent.method == "GET")
        #expect(sent.url.path == "/api/v1/users/me/sessions")
        #expect(sent.bearer == "access-1")
    }

    @Test func aSessionOfNoDeviceDecodesFromANullDeviceID() throws {
        let json = #"{"id":"s","device_id":null,"method":"apple","created_at":"2027-01-15T10:00:00Z","last_used_at":"2027-01-16","current":true}"#
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        let session = try decoder.decode(AccountSession.self, from: Data(json.utf8))
        #expect(session.deviceID == nil)
        #expect(session.lastUsedAt == "2027-01-16")
        #expect(session.current)
    }

    @Test func endingAnotherSessionDeletesItAndKeepsThisOne() async throws {
        let fixture = Fixture { _ in TransportResponse(status: 204) }
        try fixture.storeSession()
        let stored = try fixture.store.load()
        try await fixture.session().endSession(id: "session-2")
        let sent = try #require(fixture.transport.requests.first)
        #expect(sent.method == "DELETE")
        #expect(sent.url.path == "/api/v1/users/me/sessions/session-2")
        #expect(sent.bearer == "access-1")
        #expect(try fixture.store.load() == stored)
    }

    @Test func endingThisAppsOwnSessionSignsItOutHere() async throws {
        let fixture = Fixture { _ in TransportResponse(status: 204) }
        let deviceID = try fixture.storeSession()
        let session = fixture.session()
        try await session.endSession(id: "session-1")
        let stored = try #require(try fixture.store.load())
        #expect(stored.session == nil)
        #expect(stored.deviceID == deviceID)
        #expect(await session.state == .signedOut(reason: .requested))
    }

    @Test func anUnknownSessionIsNotFoundAndChangesNothing() async throws {
        let fixture = Fixture { _ in .error(404, .notFound) }
        try fixture.storeSession()
        let stored = try fixture.store.load()
        let error = await thrownError { try await fixture.session().endSession(id: "session-1") }
        #expect(error == .rejected(.init(status: 404, code: .notFound, message: "no")))
        #expect(try fixture.store.load() == stored)
    }

    @Test func anIDThatIsNotAPathSegmentIsRefusedWithoutSending() async throws {
        let fixture = Fixture()
        try fixture.storeSession()
        #expect(await thrownError { try await fixture.session().endSession(id: "../me") } == .invalidRequest("../me is not a session ID"))
        #expect(fixture.transport.requests.isEmpty)
    }

    @Test func theExportIsTheServersJSONUnchangedAndProvesTheDeviceKey() async throws {
        let body = Data(#"{"user":{"id":"user"},"identities":[],"audit_events":[]}"#.utf8)
        let fixture = Fixture { _ in TransportResponse(status: 200, headers: ["Content-Type": "application/json"], body: body) }
        try fixture.storeSession()
        #expect(try await fixture.session().exportAccount() == body)
        let sent = try #require(fixture.transport.requests.first)
        #expect(sent.method == "GET")
        #expect(sent.url.path == "/api/v1/users/me/export")
        #expect(sent.bearer == "access-1")
        #expect(sent.header(DPoPProof.header) != nil)
    }

    @Test func anExportWithoutARecentSignInIsRejected() async throws {
        let fixture = Fixture { _ in .error(403, .reauthenticationRequired) }
        try fixture.storeSession()
        let error = await thrownError { try await fixture.session().exportAccount() }
        #expect(error == .rejected(.init(status: 403, code: .reauthenticationRequired, message: "no")))
    }
}
