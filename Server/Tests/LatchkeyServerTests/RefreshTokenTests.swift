import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyServer
import Testing

/// `POST /api/v1/auth/refresh`: rotation, the grace window, lost answers and reuse detection.
///
/// The grace window is 10 s by default; "within" is 5 s after first use, "outside" is 11 s. A spent token counts as
/// reused only once a descendant was used: until then its successor is given again (the first answer was lost).
@Suite struct RefreshTokenTests {
    static let withinGrace: TimeInterval = 5
    static let outsideGrace: TimeInterval = 11

    @Test(arguments: Transport.allCases)
    func refreshReturnsANewPairInTheSameSession(transport: Transport) async throws {
        try await withServer(transport) { client, _ in
            let first = try await client.registerDevice()
            let response = try await client.refresh(first.refreshToken)
            #expect(response.status == .ok)
            let next = try response.decode(TokenPairResponse.self)
            #expect(next.refreshToken != first.refreshToken)
            #expect(next.accessToken != first.accessToken)
            #expect(next.sessionID == first.sessionID)
            #expect(next.userID == first.userID)
            #expect(next.deviceSecret == nil)
            #expect(try Forge.claims(of: next.accessToken).sessionID == first.sessionID)
            try await expectAccepted(next.accessToken, by: client)
        }
    }

    @Test func theNewRefreshTokenRefreshesAgain() async throws {
        try await withServer(.router) { client, _ in
            let first = try await client.registerDevice()
            let second = try await client.refresh(first.refreshToken).decode(TokenPairResponse.self)
            let response = try await client.refresh(second.refreshToken)
            #expect(response.status == .ok)
            let third = try response.decode(TokenPairResponse.self)
            #expect(third.sessionID == first.sessionID)
            #expect(Set([first.refreshToken, second.refreshToken, third.refreshToken]).count == 3)
        }
    }

    @Test func theOldAccessTokenWorksUntilItExpires() async throws {
        try await withServer(.router) { client, server in
            let first = try await client.registerDevice()
            #expect(try await client.refresh(first.refreshToken).status == .ok)
            try await expectAccepted(first.accessToken, by: client)

            server.clock.advance(by: server.services.configuration.tokens.sessionLifetime - 1)
            try await expectAccepted(first.accessToken, by: client)

            server.clock.advance(by: 2)
            try await expectRefused(first.accessToken, by: client)
        }
    }

    @Test(arguments: Transport.allCases)
    func reuseWithinTheGraceWindowReturnsTheSameSuccessor(transport: Transport) async throws {
        try await withServer(transport) { client, server in
            let first = try await client.registerDevice()
            let successor = try await client.refresh(first.refreshToken).decode(TokenPairResponse.self)
            server.clock.advance(by: Self.withinGrace)
            let response = try await client.refresh(first.refreshToken)
            #expect(response.status == .ok)
            let again = try response.decode(TokenPairResponse.self)
            #expect(again.refreshToken == successor.refreshToken)
            #expect(again.sessionID == successor.sessionID)
            try await expectAccepted(again.accessToken, by: client)
            try await expectAccepted(successor.accessToken, by: client)
        }
    }

    /// The answer to a refresh is lost after the server committed (a timeout, a suspended app): the app still holds
    /// the spent token, and refreshing with it a minute later must not log it out.
    @Test(arguments: Transport.allCases)
    func aLostRefreshAnswerIsGivenAgainAndOnlyALaterReuseRevokes(transport: Transport) async throws {
        try await withServer(transport) { client, server in
            let first = try await client.registerDevice()
            let lost = try await client.refresh(first.refreshToken).decode(TokenPairResponse.self)  // the app never sees this
            server.clock.advance(by: 60)
            let again = try await client.refresh(first.refreshToken)
            #expect(again.status == .ok)
            let recovered = try again.decode(TokenPairResponse.self)
            #expect(recovered.refreshToken == lost.refreshToken)
            try await expectAccepted(recovered.accessToken, by: client)
            // The app goes on with the successor; the original presented after that is a reuse: the session ends.
            let next = try await client.refresh(recovered.refreshToken).decode(TokenPairResponse.self)
            server.clock.advance(by: 60)
            expectUnauthorized(try await client.refresh(first.refreshToken), code: .invalidGrant)
            try await expectRefused(next.accessToken, by: client)
        }
    }

    /// A keyless session's refresh token copied off the device: the copy may get the owner's next token once (a late
    /// presentation looks like a lost answer), but the two cannot take turns: the next late hand-back ends the session, so
    /// the owner learns of it (signed out) instead of sharing the session silently.
    @Test(arguments: Transport.allCases)
    func aCopiedKeylessRefreshTokenCannotGoOnBesideItsOwner(transport: Transport) async throws {
        try await withServer(transport) { client, server in
            let first = try await client.registerDevice()
            let copied = first.refreshToken
            let owner = try await client.refresh(first.refreshToken).decode(TokenPairResponse.self)
            server.clock.advance(by: 60)
            let stolen = try await client.refresh(copied)
            #expect(stolen.status == .ok)
            #expect(try stolen.decode(TokenPairResponse.self).refreshToken == owner.refreshToken)
            server.clock.advance(by: 900)
            let ownerLater = try await client.refresh(owner.refreshToken).decode(TokenPairResponse.self)
            server.clock.advance(by: 60)
            expectUnauthorized(try await client.refresh(owner.refreshToken), code: .invalidGrant)
            expectUnauthorized(try await client.refresh(ownerLater.refreshToken), code: .invalidGrant)
            try await expectRefused(ownerLater.accessToken, by: client)
        }
    }

    /// Two refreshes of one app racing with the same token, cycle after cycle, stay within the grace window: none revokes.
    @Test func concurrentRefreshesOfOneAppKeepWorkingCycleAfterCycle() async throws {
        try await withServer(.router) { client, server in
            var current = try await client.registerDevice().refreshToken
            for _ in 0..<3 {
                let winner = try await client.refresh(current).decode(TokenPairResponse.self)
                server.clock.advance(by: Self.withinGrace)
                let loser = try await client.refresh(current)
                #expect(loser.status == .ok)
                #expect(try loser.decode(TokenPairResponse.self).refreshToken == winner.refreshToken)
                current = winner.refreshToken
                server.clock.advance(by: 900)
            }
        }
    }

    /// `users/me` shows `last_seen_at` to the day: read with a copied access token, it does not move when the owner
    /// refreshes, so it cannot tell a thief when to present a copied refresh token within the grace window.
    @Test(arguments: Transport.allCases)
    func lastSeenAtIsShownToTheDaySoACopiedTokenCannotTellWhenTheOwnerRefreshed(transport: Transport) async throws {
        try await withServer(transport) { client, server in
            let first = try await client.registerDevice()
            let before = try #require(try await client.me(first.accessToken).decode(UserProfile.self).devices.first?.lastSeenAt)
            #expect(before.timeIntervalSince1970.truncatingRemainder(dividingBy: 86_400) == 0)
            server.clock.advance(by: 600)
            #expect(try await client.refresh(first.refreshToken).status == .ok)
            let after = try await client.me(first.accessToken).decode(UserProfile.self).devices.first?.lastSeenAt
            #expect(after == before)
        }
    }

    @Test(arguments: Transport.allCases)
    func reuseAfterTheGraceWindowIsInvalidGrant(transport: Transport) async throws {
        try await withServer(transport) { client, server in
            let first = try await client.registerDevice()
            let successor = try await client.refresh(first.refreshToken).decode(TokenPairResponse.self)
            #expect(try await client.refresh(successor.refreshToken).status == .ok)
            server.clock.advance(by: Self.outsideGrace)
            let response = try await client.refresh(first.refreshToken)
            expectUnauthorized(response, code: .invalidGrant)
        }
    }

    @Test func reuseAfterTheGraceWindowRevokesTheSuccessorRefreshToken() async throws {
        try await withServer(.router) { client, server in
            let first = try await client.registerDevice()
            let successor = try await client.refresh(first.refreshToken).decode(TokenPairResponse.self)
            let latest = try await client.refresh(successor.refreshToken).decode(TokenPairResponse.self)
            server.clock.advance(by: Self.outsideGrace)
            #expect(try await client.refresh(first.refreshToken).status == .unauthorized)

            let response = try await client.refresh(latest.refreshToken)
            expectUnauthorized(response, code: .invalidGrant)
        }
    }

    @Test(arguments: Transport.allCases)
    func reuseAfterTheGraceWindowRevokesTheSessionsAccessTokensAtOnce(transport: Transport) async throws {
        try await withServer(transport) { client, server in
            let first = try await client.registerDevice()
            let successor = try await client.refresh(first.refreshToken).decode(TokenPairResponse.self)
            let latest = try await client.refresh(successor.refreshToken).decode(TokenPairResponse.self)
            // Verified (and cached) before the reuse.
            try await expectAccepted(latest.accessToken, by: client)
            try await expectAccepted(first.accessToken, by: client)

            server.clock.advance(by: Self.outsideGrace)
            #expect(try await client.refresh(first.refreshToken).status == .unauthorized)

            try await expectRefused(latest.accessToken, by: client)
            try await expectRefused(first.accessToken, by: client)
        }
    }

    @Test func reuseDetectionLeavesTheUsersOtherSessionsAlone() async throws {
        try await withServer(.router) { client, server in
            let first = try await client.registerDevice()
            let other = try await client.registerAgain(first)
            let successor = try await client.refresh(first.refreshToken).decode(TokenPairResponse.self)
            #expect(try await client.refresh(successor.refreshToken).status == .ok)
            server.clock.advance(by: Self.outsideGrace)
            #expect(try await client.refresh(first.refreshToken).status == .unauthorized)

            try await expectAccepted(other.accessToken, by: client)
            #expect(try await client.refresh(other.refreshToken).status == .ok)
        }
    }

    @Test func theGraceWindowIsConfigurable() async throws {
        try await withServer(.router, configure: { $0.tokens.refreshGrace = 60 }) { client, server in
            let first = try await client.registerDevice()
            let successor = try await client.refresh(first.refreshToken).decode(TokenPairResponse.self)
            server.clock.advance(by: 30)
            let response = try await client.refresh(first.refreshToken)
            #expect(response.status == .ok)
            #expect(try response.decode(TokenPairResponse.self).refreshToken == successor.refreshToken)
        }
    }

    @Test(arguments: Transport.allCases)
    func anUnknownRefreshTokenIsInvalidGrant(transport: Transport) async throws {
        try await withServer(transport) { client, _ in
            _ = try await client.registerDevice()
            let response = try await client.refresh("this-refresh-token-was-never-issued")
            expectUnauthorized(response, code: .invalidGrant)
        }
    }

    @Test func anAccessTokenIsNotARefreshToken() async throws {
        try await withServer(.router) { client, _ in
            let first = try await client.registerDevice()
            let response = try await client.refresh(first.accessToken)
            expectUnauthorized(response, code: .invalidGrant)
        }
    }

    @Test func aRefreshTokenWorksUntilJustBeforeItsLifetimeEnds() async throws {
        try await withServer(.router, configure: { $0.tokens.refreshLifetime = 3_600 }) { client, server in
            let first = try await client.registerDevice()
            server.clock.advance(by: 3_599)
            #expect(try await client.refresh(first.refreshToken).status == .ok)
        }
    }

    @Test(arguments: Transport.allCases)
    func anExpiredRefreshTokenIsInvalidGrant(transport: Transport) async throws {
        try await withServer(transport, configure: { $0.tokens.refreshLifetime = 3_600 }) { client, server in
            let first = try await client.registerDevice()
            server.clock.advance(by: 3_601)
            let response = try await client.refresh(first.refreshToken)
            expectUnauthorized(response, code: .invalidGrant)
        }
    }

    @Test func anUnusedRefreshTokenExpiresAfterTheDefaultThirtyDays() async throws {
        try await withServer(.router) { client, server in
            let first = try await client.registerDevice()
            #expect(first.refreshTokenExpiresIn == 30 * 86_400)
            server.clock.advance(by: 30 * 86_400 + 1)
            #expect(try await client.refresh(first.refreshToken).envelope?.error.code == .invalidGrant)
        }
    }

    @Test func aRotatedRefreshTokenGetsAFreshLifetime() async throws {
        try await withServer(.router, configure: { $0.tokens.refreshLifetime = 3_600 }) { client, server in
            let first = try await client.registerDevice()
            server.clock.advance(by: 3_000)
            let successor = try await client.refresh(first.refreshToken).decode(TokenPairResponse.self)
            server.clock.advance(by: 3_000)
            #expect(try await client.refresh(successor.refreshToken).status == .ok)
        }
    }

    @Test func fiftyConcurrentRefreshesOfOneTokenAllGetTheSameSuccessor() async throws {
        try await withServer(.router) { client, server in
            let first = try await client.registerDevice()
            let results = try await withThrowingTaskGroup(of: (HTTPResponse.Status, TokenPairResponse?).self) { group in
                for _ in 0..<50 {
                    group.addTask {
                        let response = try await client.refresh(first.refreshToken)
                        return (response.status, try? response.decode(TokenPairResponse.self))
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(results.count == 50)
            #expect(results.allSatisfy { $0.0 == .ok })
            let successors = Set(results.compactMap { $0.1?.refreshToken })
            #expect(successors.count == 1)
            #expect(Set(results.compactMap { $0.1?.sessionID }) == [first.sessionID])
            #expect(metricValue("latchkey_refresh_token_reuse_detected_total", in: try await client.metricsText()) ?? 0 == 0)

            // The session has exactly one live successor: it rotates once, and its own successor is used…
            let successor = try #require(successors.first)
            let third = try await client.refresh(successor)
            #expect(third.status == .ok)
            let latest = try await client.refresh(try third.decode(TokenPairResponse.self).refreshToken).decode(TokenPairResponse.self)
            // …so, presented again outside the grace window, it is detected as reused and ends the session.
            server.clock.advance(by: Self.outsideGrace)
            #expect(try await client.refresh(successor).envelope?.error.code == .invalidGrant)
            #expect(try await client.refresh(latest.refreshToken).envelope?.error.code == .invalidGrant)
            try await expectRefused(latest.accessToken, by: client)
        }
    }

    @Test(arguments: Transport.allCases)
    func reuseDetectionIsCountedInMetrics(transport: Transport) async throws {
        try await withServer(transport) { client, server in
            let first = try await client.registerDevice()
            let successor = try await client.refresh(first.refreshToken).decode(TokenPairResponse.self)
            server.clock.advance(by: Self.withinGrace)
            #expect(try await client.refresh(first.refreshToken).status == .ok)
            #expect(metricValue("latchkey_refresh_token_reuse_detected_total", in: try await client.metricsText()) ?? 0 == 0)
            #expect(try await client.refresh(successor.refreshToken).status == .ok)

            server.clock.advance(by: Self.outsideGrace)
            #expect(try await client.refresh(first.refreshToken).status == .unauthorized)
            #expect(metricValue("latchkey_refresh_token_reuse_detected_total", in: try await client.metricsText()) == 1)
        }
    }
}
