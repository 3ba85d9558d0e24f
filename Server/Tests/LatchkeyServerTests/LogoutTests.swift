import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyServer
import Testing

/// `POST /api/v1/auth/logout` with scopes `local` (the default), `global` and `others`.
///
/// Each test verifies the tokens it expects to die before logging out, so a verification cache that
/// logout failed to invalidate would show.
@Suite struct LogoutTests {
    static let logout = "/api/v1/auth/logout"

    /// Two sessions of one device user, both verified once.
    static func twoSessions(_ client: some TestClientProtocol) async throws -> (TokenPairResponse, TokenPairResponse) {
        let first = try await client.registerDevice()
        let second = try await client.registerAgain(first)
        try await expectAccepted(first.accessToken, by: client)
        try await expectAccepted(second.accessToken, by: client)
        return (first, second)
    }

    /// `logout global` dooms a keyless device's secret: the device's next `register-device` with it answers a new secret,
    /// and the old one dies (someone who copied it can no longer sign the device back in unnoticed).
    @Test(arguments: Transport.allCases)
    func logoutGlobalRotatesTheDeviceSecretAtTheNextRegistration(transport: Transport) async throws {
        try await withServer(transport) { client, _ in
            let deviceID = UUID()
            let first = try await client.registerDevice(deviceID)
            let oldSecret = try #require(first.deviceSecret)
            let response = try await client.send(.post, Self.logout, bearer: first.accessToken, json: #"{"scope":"global"}"#)
            #expect(response.status == .ok)
            func register(_ secret: String) async throws -> TestResponse {
                try await client.send(
                    .post, "/api/v1/auth/register-device", body: RegisterDeviceRequest(deviceID: deviceID.uuidString, deviceSecret: secret))
            }
            let again = try await register(oldSecret)
            #expect(again.status == .ok)
            let newSecret = try #require(try again.decode(TokenPairResponse.self).deviceSecret)
            #expect(newSecret != oldSecret)
            let refused = try await register(oldSecret)
            #expect(refused.status == .unauthorized)
            #expect(refused.envelope?.error.code == .invalidDeviceSecret)
            let later = try await register(newSecret)
            #expect(later.status == .ok)
            #expect(try later.decode(TokenPairResponse.self).deviceSecret == nil)
        }
    }

    @Test func logoutOfOneSessionKeepsTheDeviceSecret() async throws {
        try await withServer(.router) { client, _ in
            let deviceID = UUID()
            let first = try await client.registerDevice(deviceID)
            #expect(try await client.send(.post, Self.logout, bearer: first.accessToken).status == .ok)
            let again = try await client.send(
                .post, "/api/v1/auth/register-device", body: RegisterDeviceRequest(deviceID: deviceID.uuidString, deviceSecret: first.deviceSecret))
            #expect(again.status == .ok)
            #expect(try again.decode(TokenPairResponse.self).deviceSecret == nil)
        }
    }

    @Test(arguments: Transport.allCases)
    func logoutWithoutABodyEndsOnlyTheCallersSession(transport: Transport) async throws {
        try await withServer(transport) { client, _ in
            let (caller, other) = try await Self.twoSessions(client)
            let response = try await client.send(.post, Self.logout, bearer: caller.accessToken)
            #expect(response.status == .ok)
            #expect(try response.decode(LogoutResponse.self) == LogoutResponse(revokedSessions: 1))

            try await expectRefused(caller.accessToken, by: client)
            try await expectAccepted(other.accessToken, by: client)
        }
    }

    @Test(arguments: [#"{}"#, #"{"scope":"local"}"#, #"{"scope":null}"#])
    func localIsTheDefaultScope(body: String) async throws {
        try await withServer(.router) { client, _ in
            let (caller, other) = try await Self.twoSessions(client)
            let response = try await client.send(.post, Self.logout, bearer: caller.accessToken, json: body)
            #expect(response.status == .ok)
            #expect(try response.decode(LogoutResponse.self) == LogoutResponse(revokedSessions: 1))
            try await expectRefused(caller.accessToken, by: client)
            try await expectAccepted(other.accessToken, by: client)
        }
    }

    @Test func logoutKillsEveryAccessTokenOfTheSessionNotJustThePresentedOne() async throws {
        try await withServer(.router) { client, _ in
            let first = try await client.registerDevice()
            let refreshed = try await client.refresh(first.refreshToken).decode(TokenPairResponse.self)
            try await expectAccepted(first.accessToken, by: client)
            try await expectAccepted(refreshed.accessToken, by: client)

            #expect(try await client.send(.post, Self.logout, bearer: refreshed.accessToken).status == .ok)
            try await expectRefused(first.accessToken, by: client)
            try await expectRefused(refreshed.accessToken, by: client)
        }
    }

    @Test(arguments: Transport.allCases)
    func globalEndsEverySessionOfTheUser(transport: Transport) async throws {
        try await withServer(transport) { client, _ in
            let (caller, other) = try await Self.twoSessions(client)
            let stranger = try await client.registerDevice()
            try await expectAccepted(stranger.accessToken, by: client)

            let response = try await client.send(.post, Self.logout, bearer: caller.accessToken, body: LogoutRequest(scope: .global))
            #expect(response.status == .ok)
            #expect(try response.decode(LogoutResponse.self) == LogoutResponse(revokedSessions: 2))

            try await expectRefused(caller.accessToken, by: client)
            try await expectRefused(other.accessToken, by: client)
            try await expectAccepted(stranger.accessToken, by: client)
        }
    }

    @Test(arguments: Transport.allCases)
    func othersKeepsTheCallersSessionAndEndsTheRest(transport: Transport) async throws {
        try await withServer(transport) { client, _ in
            let (caller, other) = try await Self.twoSessions(client)
            let response = try await client.send(.post, Self.logout, bearer: caller.accessToken, body: LogoutRequest(scope: .others))
            #expect(response.status == .ok)
            #expect(try response.decode(LogoutResponse.self) == LogoutResponse(revokedSessions: 1))

            try await expectAccepted(caller.accessToken, by: client)
            #expect(try await client.refresh(caller.refreshToken).status == .ok)
            try await expectRefused(other.accessToken, by: client)
        }
    }

    @Test func othersWithNoOtherSessionRevokesNothing() async throws {
        try await withServer(.router) { client, _ in
            let only = try await client.registerDevice()
            let response = try await client.send(.post, Self.logout, bearer: only.accessToken, body: LogoutRequest(scope: .others))
            #expect(response.status == .ok)
            #expect(try response.decode(LogoutResponse.self) == LogoutResponse(revokedSessions: 0))
            try await expectAccepted(only.accessToken, by: client)
        }
    }

    @Test(arguments: Transport.allCases)
    func logoutWithoutABearerIs401WithTheEnvelope(transport: Transport) async throws {
        try await withServer(transport) { client, _ in
            let response = try await client.send(.post, Self.logout, body: LogoutRequest(scope: .global))
            expectUnauthorized(response)
            #expect(response.envelope?.error.message.isEmpty == false)
        }
    }

    @Test func logoutWithARevokedTokenIs401() async throws {
        try await withServer(.router) { client, _ in
            let first = try await client.registerDevice()
            #expect(try await client.send(.post, Self.logout, bearer: first.accessToken).status == .ok)
            expectUnauthorized(try await client.send(.post, Self.logout, bearer: first.accessToken))
        }
    }

    @Test(arguments: Transport.allCases)
    func theRefreshTokenOfALoggedOutSessionIsInvalidGrant(transport: Transport) async throws {
        try await withServer(transport) { client, _ in
            let first = try await client.registerDevice()
            #expect(try await client.send(.post, Self.logout, bearer: first.accessToken).status == .ok)
            let response = try await client.refresh(first.refreshToken)
            expectUnauthorized(response, code: .invalidGrant)
        }
    }

    @Test func aSpentRefreshTokenOfALoggedOutSessionIsInvalidGrantEvenWithinGrace() async throws {
        try await withServer(.router) { client, _ in
            let first = try await client.registerDevice()
            let successor = try await client.refresh(first.refreshToken).decode(TokenPairResponse.self)
            #expect(try await client.send(.post, Self.logout, bearer: successor.accessToken).status == .ok)
            // Within the grace window a spent token would normally return its successor: not once the session is over.
            let response = try await client.refresh(first.refreshToken)
            expectUnauthorized(response, code: .invalidGrant)
        }
    }

    @Test(arguments: Transport.allCases)
    func anUnknownScopeIs400AndEndsNothing(transport: Transport) async throws {
        try await withServer(transport) { client, _ in
            let (caller, other) = try await Self.twoSessions(client)
            let response = try await client.send(.post, Self.logout, bearer: caller.accessToken, json: #"{"scope":"bogus"}"#)
            #expect(response.status == .badRequest)
            #expect(response.envelope?.error.code == .invalidRequest)
            try await expectAccepted(caller.accessToken, by: client)
            try await expectAccepted(other.accessToken, by: client)
        }
    }
}
