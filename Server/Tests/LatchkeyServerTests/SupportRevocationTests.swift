import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import Testing

// `@testable`: linking an identity straight into the store (FederatedIdentity's memberwise initialiser is internal).
@testable import LatchkeyServer

/// Support can end what it revokes; a stolen session cannot do what needs a recent sign-in.
@Suite(.timeLimit(.minutes(3)))
struct SupportRevocationTests {
    // MARK: recent authentication

    @Test(arguments: Transport.allCases)
    func deletingTheAccountNeedsARecentSignIn(transport: Transport) async throws {
        try await withServer(transport) { client, server in
            let device = try await client.registerDevice()
            server.clock.advance(by: 601)  // past tokens.recent-authentication (600 s) since the session began
            let refreshed = try await client.refresh(device.refreshToken).decode(TokenPairResponse.self)  // a refresh is not a sign-in
            let refused = try await client.send(.delete, "/api/v1/users/me", bearer: refreshed.accessToken)
            #expect(refused.status == .forbidden)
            #expect(refused.envelope?.error.code == .reauthenticationRequired)
            #expect(try await server.services.users.user(id: device.userID) != nil)
            // Signing in again (the device proves itself) gives a fresh session, which may.
            let fresh = try await client.registerAgain(device)
            #expect(try await client.send(.delete, "/api/v1/users/me", bearer: fresh.accessToken).status == .ok)
        }
    }

    @Test func aFreshProofWithTheSessionsKeyCountsAsARecentSignIn() async throws {
        try await withServer(.router) { client, server in
            let key = DPoPKey()
            let device = try await client.registerDevice(key: key, at: server.clock.now()).decode(TokenPairResponse.self)
            server.clock.advance(by: 3600)
            let session = try await client.refresh(device.refreshToken, key: key, at: server.clock.now()).decode(TokenPairResponse.self)
            let nonce = try await client.dpopNonce()
            func delete(_ proof: String) async throws -> TestResponse {
                try await client.send(.delete, "/api/v1/users/me", bearer: session.accessToken, headers: [HTTPField.Name("DPoP")!: proof])
            }
            // Another key's proof proves nothing about this session.
            let stranger = try await delete(
                try DPoPKey().proof("DELETE", "/api/v1/users/me", nonce: nonce, iat: server.clock.now(), accessToken: session.accessToken))
            #expect(stranger.envelope?.error.code == .reauthenticationRequired)
            #expect(
                try await delete(try key.proof("DELETE", "/api/v1/users/me", nonce: nonce, iat: server.clock.now(), accessToken: session.accessToken))
                    .status == .ok)
        }
    }

    /// A proof stands in for a recent sign-in only when it names the request's access token (`ath`, RFC 9449 §4.3), and
    /// only once: a proof seen on the wire cannot be sent again, nor with another token of the session.
    @Test func aProofStandsInForARecentSignInOnceAndOnlyForItsToken() async throws {
        try await withServer(.live) { client, server in
            let key = DPoPKey()
            let device = try await client.registerDevice(key: key, at: server.clock.now()).decode(TokenPairResponse.self)
            server.clock.advance(by: 3600)
            let session = try await client.refresh(device.refreshToken, key: key, at: server.clock.now()).decode(TokenPairResponse.self)
            let nonce = try await client.dpopNonce()
            func delete(_ proof: String) async throws -> TestResponse {
                try await client.send(.delete, "/api/v1/users/me", bearer: session.accessToken, headers: [HTTPField.Name("DPoP")!: proof])
            }
            let now = server.clock.now()
            // Without ath the proof is not tied to the token: it does not stand in.
            let untied = try await delete(try key.proof("DELETE", "/api/v1/users/me", nonce: nonce, iat: now))
            #expect(untied.status == .forbidden)
            #expect(untied.envelope?.error.code == .reauthenticationRequired)
            // With the hash of another token it is refused as a proof.
            let other = try await delete(try key.proof("DELETE", "/api/v1/users/me", nonce: nonce, iat: now, accessToken: device.accessToken))
            #expect(other.status == .badRequest)
            #expect(other.envelope?.error.code == .invalidDPoPProof)
            // Unlinking with a proof for this token and path spends it: the same proof again is refused.
            let proof = try key.proof("DELETE", "/api/v1/users/me/identities/clerk", nonce: nonce, iat: now, accessToken: session.accessToken)
            func unlink() async throws -> TestResponse {
                try await client.send(
                    .delete, "/api/v1/users/me/identities/clerk", bearer: session.accessToken, headers: [HTTPField.Name("DPoP")!: proof])
            }
            try await Self.link("clerk", to: device.userID, on: server)
            #expect(try await unlink().status == .ok)
            try await Self.link("clerk", to: device.userID, on: server)
            let replayed = try await unlink()
            #expect(replayed.status == .badRequest)
            #expect(replayed.envelope?.error.code == .invalidDPoPProof)
            #expect(try await client.me(session.accessToken).decode(UserProfile.self).identities.map(\.provider) == ["clerk"])
        }
    }

    // MARK: unlinking

    static func link(_ provider: String, to userID: String, on server: TestServer) async throws {
        let store = SQLLatchkeyStore(database: server.services.database)
        let identity = FederatedIdentity(
            provider: provider, subject: "subject-\(UUID().uuidString)", userID: userID, email: nil, clientID: nil, sealedRefreshToken: nil,
            createdAt: server.clock.now())
        let (session, _, _) = server.services.sessions.makeSession(userID: userID, deviceID: nil, amr: [.apple])
        _ = try await store.completeSignIn(identity, linkingTo: userID, newUserID: userID, nonce: nil, session: session, now: server.clock.now())
    }

    @Test func aUserUnlinksAnIdentityAndItLeavesTheProfile() async throws {
        try await withServer(.router) { client, server in
            let device = try await client.registerDevice()
            try await Self.link("clerk", to: device.userID, on: server)
            #expect(try await client.me(device.accessToken).decode(UserProfile.self).identities.map(\.provider) == ["clerk"])
            let response = try await client.send(.delete, "/api/v1/users/me/identities/clerk", bearer: device.accessToken)
            #expect(response.status == .ok)
            #expect(try response.decode(UnlinkIdentityResponse.self) == UnlinkIdentityResponse(provider: "clerk", unlinked: 1))
            #expect(try await client.me(device.accessToken).decode(UserProfile.self).identities.isEmpty)
            #expect(try await client.send(.delete, "/api/v1/users/me/identities/clerk", bearer: device.accessToken).status == .notFound)
        }
    }

    @Test func anAccountsOnlyWayToSignInCannotBeUnlinked() async throws {
        try await withServer(.router) { client, server in
            // A user an identity provider created, signed in with a session.
            let userID = UUID().uuidString.lowercased()
            #expect(try await SQLLatchkeyStore(database: server.services.database).registerUser(id: userID, kind: .federated, at: server.clock.now()))
            try await Self.link("apple", to: userID, on: server)
            let session = try await server.services.sessions.startSession(userID: userID, deviceID: nil, proof: nil, amr: [.apple])
            let response = try await client.send(.delete, "/api/v1/users/me/identities/apple", bearer: session.accessToken)
            #expect(response.status == .conflict)
            #expect(response.envelope?.error.code == .lastSignInMethod)
        }
    }

    @Test func unlinkingNeedsARecentSignIn() async throws {
        try await withServer(.router) { client, server in
            let device = try await client.registerDevice()
            try await Self.link("clerk", to: device.userID, on: server)
            server.clock.advance(by: 601)
            let old = try await client.refresh(device.refreshToken).decode(TokenPairResponse.self)
            let response = try await client.send(.delete, "/api/v1/users/me/identities/clerk", bearer: old.accessToken)
            #expect(response.envelope?.error.code == .reauthenticationRequired)
        }
    }

    // MARK: support commands

    func withLiveServer(_ body: @Sendable @escaping (any TestClientProtocol, TestServer) async throws -> Void) async throws {
        let server = try await TestServer.make(clock: ManualClock(start: Date().addingTimeInterval(20))) { configuration in
            configuration.keyReloadInterval = 3600
            configuration.revocationPollInterval = 3600
        }
        try await server.test(.live) { client in try await body(client, server) }
    }

    @Test func usersRevokeSessionsEndsEverySessionOfTheUser() async throws {
        try await self.withLiveServer { client, server in
            let device = try await client.registerDevice()
            let second = try await client.registerAgain(device)
            try await expectAccepted(device.accessToken, by: client)
            let run = try await server.cli("users", "revoke-sessions", device.userID)
            #expect(run.exitCode == 0, "\(run)")
            #expect(run.stdout.contains("revoked 2 sessions"))
            try await server.services.revocations.poll()
            try await expectRefused(device.accessToken, by: client)
            try await expectRefused(second.accessToken, by: client)
            #expect(try await client.refresh(second.refreshToken).envelope?.error.code == .invalidGrant)
        }
    }

    @Test func devicesResetGivesANewSecretAndTheOldOneStopsWorking() async throws {
        try await self.withLiveServer { client, server in
            let device = try await client.registerDevice()
            let run = try await server.cli("devices", "reset", device.userID)
            #expect(run.exitCode == 0, "\(run)")
            let secret = try #require(run.stdoutLines.first)
            #expect(run.stdoutLines.count == 1)
            try await server.services.revocations.poll()
            try await expectRefused(device.accessToken, by: client)
            let old = try await client.send(
                .post, "/api/v1/auth/register-device", body: RegisterDeviceRequest(deviceID: device.userID, deviceSecret: device.deviceSecret))
            expectUnauthorized(old, code: .invalidDeviceSecret)
            let new = try await client.send(
                .post, "/api/v1/auth/register-device", body: RegisterDeviceRequest(deviceID: device.userID, deviceSecret: secret))
            #expect(new.status == .ok)
        }
    }

    @Test func revokingAnAccessCodeFromTheCLIEndsTheSessionsExchangedFromIt() async throws {
        try await self.withLiveServer { client, server in
            let device = try await client.registerDevice()
            let (code, record) = try await server.services.accessCodes.issue(userID: device.userID, expiresIn: nil, note: nil)
            let exchanged = try await client.send(.post, "/api/v1/auth/access-code/exchange", body: AccessCodeExchangeRequest(accessCode: code))
                .decode(TokenPairResponse.self)
            try await expectAccepted(exchanged.accessToken, by: client)
            let run = try await server.cli("access-code", "revoke", record.id)
            #expect(run.exitCode == 0, "\(run)")
            #expect(run.stdout.contains("1 session exchanged from it ended"))
            try await server.services.revocations.poll()
            try await expectRefused(exchanged.accessToken, by: client)
            try await expectAccepted(device.accessToken, by: client)
        }
    }
}
