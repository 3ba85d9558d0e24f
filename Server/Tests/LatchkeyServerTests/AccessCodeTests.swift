import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyServer
import Testing

/// Access codes through HTTP, issued with the in-process API the CLI uses.
@Suite struct AccessCodeTests {
    static let exchangePath = "/api/v1/auth/access-code/exchange"

    func exchange(_ code: String, with client: some TestClientProtocol) async throws -> TestResponse {
        try await client.send(.post, Self.exchangePath, body: AccessCodeExchangeRequest(accessCode: code))
    }

    /// A registered device and a code issued for its user.
    func issueCode(
        for client: some TestClientProtocol, on server: TestServer, expiresIn: TimeInterval? = nil
    ) async throws -> (device: TokenPairResponse, code: String, record: AccessCodeRecord) {
        let device = try await client.registerDevice()
        let (code, record) = try await server.services.accessCodes.issue(userID: device.userID, expiresIn: expiresIn, note: nil)
        return (device, code, record)
    }

    // MARK: exchange

    @Test(arguments: Transport.allCases)
    func exchangingACodeAnswersATokenPairForTheCodesUser(transport: Transport) async throws {
        try await withServer(transport) { client, server in
            let (device, code, _) = try await self.issueCode(for: client, on: server)
            let response = try await self.exchange(code, with: client)
            #expect(response.status == .ok)
            let pair = try response.decode(TokenPairResponse.self)
            #expect(pair.userID == device.userID)
            #expect(pair.tokenType == "Bearer")
            #expect(pair.deviceSecret == nil)
            #expect(pair.sessionID != device.sessionID)
            #expect(!pair.refreshToken.isEmpty)
        }
    }

    @Test(arguments: Transport.allCases)
    func theExchangedAccessTokenIsASessionTokenOfTheCodesUser(transport: Transport) async throws {
        try await withServer(transport) { client, server in
            let (device, code, _) = try await self.issueCode(for: client, on: server)
            let pair = try await self.exchange(code, with: client).decode(TokenPairResponse.self)
            let validation = try await client.validate(pair.accessToken)
            #expect(validation.status == .ok)
            let answer = try validation.decode(ValidateTokenResponse.self)
            #expect(answer.kind == .session)
            #expect(answer.sub == device.userID)
            let profile = try await client.me(pair.accessToken).decode(UserProfile.self)
            #expect(profile.userID == device.userID)
            #expect(profile.sessionID == pair.sessionID)
        }
    }

    @Test(arguments: Transport.allCases)
    func theExchangedSessionRefreshes(transport: Transport) async throws {
        try await withServer(transport) { client, server in
            let (device, code, _) = try await self.issueCode(for: client, on: server)
            let pair = try await self.exchange(code, with: client).decode(TokenPairResponse.self)
            let response = try await client.refresh(pair.refreshToken)
            #expect(response.status == .ok)
            let next = try response.decode(TokenPairResponse.self)
            #expect(next.sessionID == pair.sessionID)
            #expect(next.userID == device.userID)
            #expect(try await client.validate(next.accessToken).status == .ok)
        }
    }

    @Test func theCodeStaysValidAfterItsExchange() async throws {
        try await withServer(.router) { client, server in
            let (_, code, _) = try await self.issueCode(for: client, on: server)
            #expect(try await self.exchange(code, with: client).status == .ok)
            try await expectAccepted(code, by: client)
            #expect(try await self.exchange(code, with: client).status == .ok)
        }
    }

    @Test(arguments: Transport.allCases)
    func exchangingASessionAccessTokenIsInvalidToken(transport: Transport) async throws {
        try await withServer(transport) { client, _ in
            let device = try await client.registerDevice()
            let response = try await self.exchange(device.accessToken, with: client)
            expectUnauthorized(response, code: .invalidToken)
        }
    }

    @Test func exchangingACodeWithAForgedSignatureIsInvalidToken() async throws {
        try await withServer(.router) { client, server in
            let (_, code, _) = try await self.issueCode(for: client, on: server)
            let response = try await self.exchange(try Forge.flippingSignatureBit(code), with: client)
            expectUnauthorized(response, code: .invalidToken)
        }
    }

    // MARK: as a bearer

    @Test(arguments: Transport.allCases)
    func aCodeWorksAsABearerAndValidateTokenReportsItsKind(transport: Transport) async throws {
        try await withServer(transport) { client, server in
            let (device, code, record) = try await self.issueCode(for: client, on: server)
            let validation = try await client.validate(code)
            #expect(validation.status == .ok)
            #expect(
                try validation.decode(ValidateTokenResponse.self)
                    == ValidateTokenResponse(sub: device.userID, exp: Int64(record.expiresAt.timeIntervalSince1970), kind: .accessCode))
            let profile = try await client.me(code)
            #expect(profile.status == .ok)
            #expect(try profile.decode(UserProfile.self).tokenKind == .accessCode)
        }
    }

    @Test func aCodesIDIsItsJTIAndItsSubjectIsTheUser() async throws {
        try await withServer(.router) { client, server in
            let (device, code, record) = try await self.issueCode(for: client, on: server)
            let claims = try Forge.claims(of: code)
            #expect(claims.tokenID == record.id)
            #expect(claims.subject == device.userID)
            #expect(claims.kind == .accessCode)
            #expect(claims.sessionID == nil)
        }
    }

    // MARK: expiry

    @Test func anExpiredCodeCannotBeExchanged() async throws {
        try await withServer(.router) { client, server in
            let (_, code, _) = try await self.issueCode(for: client, on: server, expiresIn: 3600)
            server.clock.advance(by: 3601)
            expectUnauthorized(try await self.exchange(code, with: client), code: .invalidToken)
        }
    }

    @Test func anExpiredCodeIsRefusedAsABearer() async throws {
        try await withServer(.router) { client, server in
            let (_, code, _) = try await self.issueCode(for: client, on: server, expiresIn: 3600)
            server.clock.advance(by: 3601)
            try await expectRefused(code, by: client)
        }
    }

    @Test func aCodeInUseStopsWorkingAtItsExpiry() async throws {
        try await withServer(.router) { client, server in
            let (_, code, _) = try await self.issueCode(for: client, on: server, expiresIn: 30)
            try await expectAccepted(code, by: client)
            server.clock.advance(by: 29)
            try await expectAccepted(code, by: client)
            server.clock.advance(by: 1)
            try await expectRefused(code, by: client)
            expectUnauthorized(try await self.exchange(code, with: client), code: .invalidToken)
        }
    }

    @Test func aCodeIssuedWithoutALifetimeLastsTheConfiguredDefault() async throws {
        try await withServer(.router, configure: { $0.tokens.accessCodeLifetime = 7200 }) { client, server in
            let (_, code, record) = try await self.issueCode(for: client, on: server)
            let claims = try Forge.claims(of: code)
            #expect(claims.expiresAt - claims.issuedAt == 7200)
            #expect(record.expiresAt.timeIntervalSince(record.createdAt) == 7200)
        }
    }

    // MARK: revocation

    @Test(arguments: Transport.allCases)
    func aRevokedCodeCannotBeExchanged(transport: Transport) async throws {
        try await withServer(transport) { client, server in
            let (_, code, record) = try await self.issueCode(for: client, on: server)
            _ = try await server.services.accessCodes.revoke(id: record.id)
            expectUnauthorized(try await self.exchange(code, with: client), code: .invalidToken)
        }
    }

    @Test func aCodeInUseIsRefusedAtOnceAfterItsRevocation() async throws {
        try await withServer(.router) { client, server in
            let (_, code, record) = try await self.issueCode(for: client, on: server)
            try await expectAccepted(code, by: client)
            _ = try await server.services.accessCodes.revoke(id: record.id)
            try await expectRefused(code, by: client)
        }
    }

    @Test func revokingACodeEndsTheSessionsExchangedFromIt() async throws {
        try await withServer(.router) { client, server in
            let (user, code, record) = try await self.issueCode(for: client, on: server)
            let pair = try await self.exchange(code, with: client).decode(TokenPairResponse.self)
            let refreshed = try await client.refresh(pair.refreshToken).decode(TokenPairResponse.self)
            try await expectAccepted(refreshed.accessToken, by: client)  // verified, so cached, before the revocation
            // The user's own device session is not the code's: it stays.
            let own = try await client.registerAgain(user)
            let revoked = try await server.services.accessCodes.revoke(id: record.id)
            #expect(revoked.revokedSessions == 1)
            try await expectRefused(refreshed.accessToken, by: client)
            #expect(try await client.refresh(refreshed.refreshToken).envelope?.error.code == .invalidGrant)
            try await expectAccepted(own.accessToken, by: client)
        }
    }

    @Test func revokingMarksTheCodeRevokedInTheList() async throws {
        try await withServer(.router) { client, server in
            let (_, _, record) = try await self.issueCode(for: client, on: server)
            let revoked = try await server.services.accessCodes.revoke(id: record.id).code
            #expect(revoked.id == record.id)
            #expect(revoked.revokedAt == server.clock.now())
            #expect(try await server.services.accessCodes.list().map(\.revokedAt) == [server.clock.now()])
        }
    }

    @Test func revokingAnUnknownCodeThrows() async throws {
        let server = try await TestServer.make()
        await #expect(throws: ServiceError.self) { _ = try await server.services.accessCodes.revoke(id: UUID().uuidString.lowercased()) }
        await server.close()
    }

    // MARK: issuing

    @Test func issuingForAnUnknownUserThrowsAndStoresNothing() async throws {
        let server = try await TestServer.make()
        let unknown = UUID().uuidString.lowercased()
        let error = await #expect(throws: ServiceError.self) {
            _ = try await server.services.accessCodes.issue(userID: unknown, expiresIn: nil, note: nil)
        }
        #expect(error?.kind == .notFound)
        #expect(error?.message.contains(unknown) == true)
        #expect(try await server.services.accessCodes.list().isEmpty)
        await server.close()
    }

    @Test func issuingKeepsTheNoteForTheList() async throws {
        try await withServer(.router) { client, server in
            let device = try await client.registerDevice()
            let (_, record) = try await server.services.accessCodes.issue(userID: device.userID, expiresIn: 600, note: "ticket #42")
            #expect(try await server.services.accessCodes.list() == [record])
            #expect(record.note == "ticket #42")
            #expect(record.userID == device.userID)
        }
    }

    @Test func aDeletedUsersCodeIsRefused() async throws {
        try await withServer(.router) { client, server in
            let (device, code, _) = try await self.issueCode(for: client, on: server)
            try await expectAccepted(code, by: client)
            _ = try await server.services.users.delete(userID: device.userID)
            try await expectRefused(code, by: client)
            expectUnauthorized(try await self.exchange(code, with: client), code: .invalidToken)
        }
    }
}
