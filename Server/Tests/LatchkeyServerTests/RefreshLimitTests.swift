import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyServer
import NIOCore
import Testing

/// The limits of `POST /api/v1/auth/refresh`: successes count per session, failures per client IP, and
/// knowing a session ID (every access token's `sid`) is not enough to lock its user out.
@Suite struct RefreshLimitTests {
    static func limited(_ configure: @escaping (inout AbuseLimits) -> Void) -> (inout LatchkeyConfiguration) -> Void {
        AbuseLimitTests.limited(configure)
    }

    /// A refresh token of the right shape for `sessionID` whose secret nobody issued.
    static func madeUp(for sessionID: String = UUID().uuidString.lowercased()) -> String {
        sessionID + "." + Data((0..<32).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
    }

    static func header(_ response: TestResponse, _ name: String) -> String? { response.headers[HTTPField.Name(name)!] }

    @Test func madeUpSecretsForARealSessionIDDoNotUseUpItsRefreshes() async throws {
        try await withServer(.router, configure: Self.limited { _ in }) { client, _ async throws in
            let pair = try await client.registerDevice()
            for _ in 0..<40 {
                let forged = try await client.refresh(Self.madeUp(for: pair.sessionID))
                #expect(forged.status == .unauthorized)
                #expect(forged.envelope?.error.code == .invalidGrant)
            }
            let real = try await client.refresh(pair.refreshToken)
            #expect(real.status == .ok)
            #expect(Self.header(real, "X-RateLimit-Remaining") == "29")
        }
    }

    @Test func failedRefreshesFromOneAddressBeyondItsLimitGet429UntilTheWindowPasses() async throws {
        try await withServer(.router, configure: Self.limited { $0.refreshFailures.limit = 3 }) { client, server async throws in
            for token in ["not-a-refresh-token", Self.madeUp(), Self.madeUp()] {
                #expect(try await client.refresh(token).status == .unauthorized)
            }
            let refused = try await client.refresh(Self.madeUp())
            #expect(refused.status == .tooManyRequests)
            #expect(refused.envelope?.error.code == .rateLimited)
            #expect(Self.header(refused, "Retry-After") == "300")
            #expect(Self.header(refused, "X-RateLimit-Limit") == "3")
            #expect(Self.header(refused, "X-RateLimit-Remaining") == "0")
            server.clock.advance(by: 300)
            #expect(try await client.refresh(Self.madeUp()).status == .unauthorized)
        }
    }

    /// A failure is counted before the refresh is tried: of 20 made-up tokens at once from one address, at most the
    /// limit's 5 are tried (401) and the rest held back (429); a real token still refreshes, and its success is not counted.
    @Test func concurrentFailedRefreshesGetAtMostTheLimitOfTries() async throws {
        try await withServer(.live, configure: Self.limited { $0.refreshFailures.limit = 5 }) { client, _ async throws in
            let pair = try await client.registerDevice()
            let answers = try await racing(20, port: try #require(client.port)) { _ in
                let body = #"{"refresh_token":"\#(Self.madeUp(for: pair.sessionID))"}"#
                return .init("/api/v1/auth/refresh", method: .post, headers: [.contentType: "application/json"], body: ByteBuffer(string: body))
            }
            let tried = answers.filter { $0 == RacedAnswer(status: .unauthorized, code: .invalidGrant) }.count
            #expect(tried <= 5 && tried > 0, "\(tried) made-up refresh tokens were tried")
            #expect(answers.filter { $0 == RacedAnswer(status: .tooManyRequests, code: .rateLimited) }.count == 20 - tried)
            let refused = try await client.refresh(Self.madeUp())
            #expect(refused.status == .tooManyRequests)
            #expect(Self.header(refused, "Retry-After") == "300")
            let real = try await client.refresh(pair.refreshToken)
            #expect(real.status == .ok)
            #expect(Self.header(real, "X-RateLimit-Limit") == "30")  // the session's count, not the address's
        }
    }

    @Test func successfulRefreshesDoNotCountAgainstTheAddressFailureLimit() async throws {
        try await withServer(.router, configure: Self.limited { $0.refreshFailures.limit = 1 }) { client, _ async throws in
            var token = try await client.registerDevice().refreshToken
            for _ in 0..<3 {
                let response = try await client.refresh(token)
                #expect(response.status == .ok)
                token = try response.decode(TokenPairResponse.self).refreshToken
            }
            #expect(try await client.refresh(Self.madeUp()).status == .unauthorized)
            #expect(try await client.refresh(Self.madeUp()).status == .tooManyRequests)
        }
    }

    @Test func aRealTokenStillRefreshesFromAnAddressOverItsFailureLimit() async throws {
        try await withServer(.router, configure: Self.limited { $0.refreshFailures.limit = 3 }) { client, _ async throws in
            let pair = try await client.registerDevice()
            for expected in [HTTPResponse.Status.unauthorized, .unauthorized, .unauthorized, .tooManyRequests, .tooManyRequests] {
                #expect(try await client.refresh(Self.madeUp(for: pair.sessionID)).status == expected)
            }
            let real = try await client.refresh(pair.refreshToken)
            #expect(real.status == .ok)
            #expect(Self.header(real, "X-RateLimit-Limit") == "30")  // the session's count, not the address's
        }
    }

    /// Letting issued tokens through keeps reuse detection working for an address over its failure limit, and
    /// such a token gets its own answer (401 `invalid_grant`: sign in again), not a 429 to wait out.
    @Test func aSpentTokenFromAnAddressOverItsFailureLimitStillRevokesTheSession() async throws {
        try await withServer(.router, configure: Self.limited { $0.refreshFailures.limit = 1 }) { client, server async throws in
            let first = try await client.registerDevice()
            let second = try await client.refresh(first.refreshToken).decode(TokenPairResponse.self)
            #expect(try await client.refresh(second.refreshToken).status == .ok)  // a descendant used: reuse from now on
            #expect(try await client.refresh(Self.madeUp()).status == .unauthorized)
            #expect(try await client.refresh(Self.madeUp()).status == .tooManyRequests)
            server.clock.advance(by: 11)  // past the grace window
            let reused = try await client.refresh(first.refreshToken)
            #expect(reused.status == .unauthorized)
            #expect(reused.envelope?.error.code == .invalidGrant)
            try await expectRefused(second.accessToken, by: client)
        }
    }

    @Test func refreshFailuresAreCountedPerClientIP() async throws {
        let limits = Self.limited {
            $0.refreshFailures.limit = 1
            $0.trustedProxies = ["127.0.0.1"]
        }
        try await withServer(.live, configure: limits) { client, _ async throws in
            func refresh(from address: String) async throws -> HTTPResponse.Status {
                let body = #"{"refresh_token":"\#(Self.madeUp())"}"#
                return try await client.send(.post, "/api/v1/auth/refresh", json: body, headers: [HTTPField.Name("X-Forwarded-For")!: address]).status
            }
            #expect(try await refresh(from: "203.0.113.1") == .unauthorized)
            #expect(try await refresh(from: "203.0.113.1") == .tooManyRequests)
            #expect(try await refresh(from: "203.0.113.2") == .unauthorized)
        }
    }
}

extension RefreshLimitTests {
    @Test func byDefaultThirtySuccessesPerSessionAndSixtyFailuresPerAddressInFiveMinutes() {
        let limits = AbuseLimits()
        #expect(limits.refresh == RateLimitPolicy(name: "refresh", limit: 30, window: 300, countsOnlySuccesses: true))
        #expect(limits.refreshFailures == RateLimitPolicy(name: "refresh-failures", limit: 60, window: 300))
        #expect(AbuseLimits.off.refreshFailures.limit == 0)
    }

    @Test func theFailureLimitIsReadFromTheConfigFile() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("latchkey-limits-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: file) }
        try #"{"limits": {"refresh-failures": {"limit": 5, "window": 60}}}"#.write(to: file, atomically: true, encoding: .utf8)
        let configuration = try await LatchkeyConfiguration.load(overrides: [:], configFile: file.path)
        #expect(configuration.limits.refreshFailures == RateLimitPolicy(name: "refresh-failures", limit: 5, window: 60))
    }

    /// The variable scripts/test sets to switch the limit off.
    @Test func theFailureLimitIsReadFromTheEnvironment() async throws {
        let port = try ServeCommandTests.freePort()
        let server = try await ServeCommandTests.start(
            ["serve", "--port", String(port)], environment: ["LATCHKEY_LIMITS_REFRESH_FAILURES_LIMIT": "1"], port: port)
        let body = #"{"refresh_token":"\#(Self.madeUp())"}"#
        #expect(try await server.post("api/v1/auth/refresh", json: body).0 == 401)
        #expect(try await server.post("api/v1/auth/refresh", json: body).0 == 429)
        #expect(await server.terminate() == 0)
    }
}
