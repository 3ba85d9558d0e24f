import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyServer
import Testing

/// Abuse limits on the identity endpoints: rolling windows, the rate-limit headers, 429 with `Retry-After`,
/// exact under concurrency, keyed by client IP (or session for refresh).
@Suite struct AbuseLimitTests {
    static func limited(_ configure: @escaping (inout AbuseLimits) -> Void) -> (inout LatchkeyConfiguration) -> Void {
        { configuration in
            var limits = AbuseLimits()
            configure(&limits)
            configuration.limits = limits
        }
    }

    static func register(_ client: some TestClientProtocol, headers: HTTPFields = [:]) async throws -> TestResponse {
        try await client.send(.post, "/api/v1/auth/register-device", json: #"{"device_id":"\#(UUID().uuidString)"}"#, headers: headers)
    }

    static func header(_ response: TestResponse, _ name: String) -> String? { response.headers[HTTPField.Name(name)!] }

    @Test(arguments: Transport.allCases)
    func registrationsCarryTheRateLimitHeadersAndTheOneOverTheLimitGets429WithRetryAfter(transport: Transport) async throws {
        try await withServer(transport, configure: Self.limited { $0.registerDevice.limit = 3 }) { client, server async throws in
            let start = server.clock.now()
            for remaining in [2, 1, 0] {
                let response = try await Self.register(client)
                #expect(response.status == .created)
                #expect(Self.header(response, "X-RateLimit-Limit") == "3")
                #expect(Self.header(response, "X-RateLimit-Remaining") == String(remaining))
                #expect(Self.header(response, "X-RateLimit-Reset") == String(Int(start.timeIntervalSince1970) + 3600))
            }
            let refused = try await Self.register(client)
            #expect(refused.status == .tooManyRequests)
            #expect(refused.envelope?.error.code == .rateLimited)
            #expect(Self.header(refused, "Retry-After") == "3600")
            #expect(Self.header(refused, "X-RateLimit-Remaining") == "0")
        }
    }

    @Test func theWindowRolls() async throws {
        try await withServer(.router, configure: Self.limited { $0.registerDevice.limit = 2 }) { client, server async throws in
            #expect(try await Self.register(client).status == .created)
            server.clock.advance(by: 1800)
            #expect(try await Self.register(client).status == .created)
            #expect(try await Self.register(client).status == .tooManyRequests)
            server.clock.advance(by: 1801)  // the first hit has left the window, the second has not
            #expect(try await Self.register(client).status == .created)
            #expect(try await Self.register(client).status == .tooManyRequests)
        }
    }

    @Test func fiftyConcurrentRegistrationsAgainstALimitOfFiveLetExactlyFiveThrough() async throws {
        try await withServer(.router, configure: Self.limited { $0.registerDevice.limit = 5 }) { client, server async throws in
            let statuses = try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
                for _ in 0..<50 { group.addTask { try await Self.register(client).status } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(statuses.filter { $0 == .created }.count == 5)
            #expect(statuses.filter { $0 == .tooManyRequests }.count == 45)
            #expect(try await server.services.users.users(limit: 100, offset: 0).count == 5)
        }
    }

    @Test func everyAttemptCountsEvenARejectedOneAndItsErrorCarriesTheHeaders() async throws {
        try await withServer(.router, configure: Self.limited { $0.registerDevice.limit = 1 }) { client, _ async throws in
            let bad = try await client.send(.post, "/api/v1/auth/register-device", json: "{")
            #expect(bad.status == .badRequest)
            #expect(Self.header(bad, "X-RateLimit-Remaining") == "0")
            #expect(try await Self.register(client).status == .tooManyRequests)
        }
    }

    @Test func aNewDeviceIDDoesNotEscapeTheGuestLimitOfItsAddress() async throws {
        try await withServer(.router, configure: Self.limited { $0.guest.limit = 2 }) { client, _ async throws in
            for expected in [HTTPResponse.Status.created, .created, .tooManyRequests] {
                let response = try await client.send(.post, "/api/v1/auth/guest", headers: [HTTPField.Name("X-Device-ID")!: UUID().uuidString])
                #expect(response.status == expected)
            }
        }
    }

    @Test func accessCodeExchangesAreLimitedPerAddress() async throws {
        try await withServer(.router, configure: Self.limited { $0.accessCodeExchange.limit = 1 }) { client, _ async throws in
            #expect(try await client.send(.post, "/api/v1/auth/access-code/exchange", json: #"{"access_code":"x"}"#).status == .unauthorized)
            #expect(try await client.send(.post, "/api/v1/auth/access-code/exchange", json: #"{"access_code":"x"}"#).status == .tooManyRequests)
        }
    }

    @Test func refreshIsLimitedPerSessionNotPerAddress() async throws {
        try await withServer(.router, configure: Self.limited { $0.refresh.limit = 1 }) { client, _ async throws in
            let first = try await client.registerDevice()
            let second = try await client.registerDevice()
            let rotated = try await client.send(.post, "/api/v1/auth/refresh", body: RefreshRequest(refreshToken: first.refreshToken))
            #expect(rotated.status == .ok)
            #expect(try await client.send(.post, "/api/v1/auth/refresh", body: RefreshRequest(refreshToken: second.refreshToken)).status == .ok)
            let next = try rotated.decode(TokenPairResponse.self).refreshToken
            #expect(try await client.send(.post, "/api/v1/auth/refresh", body: RefreshRequest(refreshToken: next)).status == .tooManyRequests)
        }
    }

    @Test func xForwardedForIsIgnoredFromAnUntrustedPeer() async throws {
        try await withServer(.live, configure: Self.limited { $0.registerDevice.limit = 1 }) { client, _ async throws in
            #expect(try await Self.register(client, headers: [HTTPField.Name("X-Forwarded-For")!: "203.0.113.1"]).status == .created)
            #expect(try await Self.register(client, headers: [HTTPField.Name("X-Forwarded-For")!: "203.0.113.2"]).status == .tooManyRequests)
        }
    }

    @Test func xForwardedForNamesTheClientBehindATrustedProxy() async throws {
        let limits = Self.limited {
            $0.registerDevice.limit = 1
            $0.trustedProxies = ["127.0.0.1"]
        }
        try await withServer(.live, configure: limits) { client, _ async throws in
            #expect(try await Self.register(client, headers: [HTTPField.Name("X-Forwarded-For")!: "203.0.113.1"]).status == .created)
            #expect(try await Self.register(client, headers: [HTTPField.Name("X-Forwarded-For")!: "203.0.113.2"]).status == .created)
            // A client cannot pick its bucket by prepending addresses: the proxy appends the real one last.
            let spoofed: HTTPFields = [HTTPField.Name("X-Forwarded-For")!: "198.51.100.9, 203.0.113.1"]
            #expect(try await Self.register(client, headers: spoofed).status == .tooManyRequests)
        }
    }

    @Test func aLimitOfZeroSwitchesThePolicyOff() async throws {
        try await withServer(.router, configure: Self.limited { $0.registerDevice.limit = 0 }) { client, _ async throws in
            let response = try await Self.register(client)
            #expect(response.status == .created)
            #expect(Self.header(response, "X-RateLimit-Limit") == nil)
        }
    }

    @Test func theDefaultsAreThirtyAnHourForRegistrationAndGuests() {
        let limits = AbuseLimits()
        #expect(limits.registerDevice == RateLimitPolicy(name: "register-device", limit: 30, window: 3600))
        #expect(limits.guest == RateLimitPolicy(name: "guest", limit: 30, window: 3600))
        #expect(limits.accessCodeExchange == RateLimitPolicy(name: "access-code-exchange", limit: 30, window: 300))
    }
}

extension AbuseLimitTests {
    /// Sign in with Apple and token exchange may create users: every attempt counts against one per-IP limit.
    @Test(arguments: ["/api/v1/auth/apple", "/api/v1/auth/token-exchange"])
    func signInAttemptsAreLimitedPerClientIP(path: String) async throws {
        try await withServer(.router, configure: Self.limited { $0.signIn.limit = 2 }) { client, _ async throws in
            let body = path.hasSuffix("apple") ? #"{"identity_token":"x.y.z","raw_nonce":"n"}"# : #"{"subject_token":"x.y.z"}"#
            for _ in 0..<2 {
                let refused = try await client.send(.post, path, json: body)
                #expect(refused.status != .tooManyRequests)
                #expect(Self.header(refused, "X-RateLimit-Limit") == "2")
            }
            let limited = try await client.send(.post, path, json: body)
            #expect(limited.status == .tooManyRequests)
            #expect(limited.envelope?.error.code == .rateLimited)
            #expect(Self.header(limited, "Retry-After") == "300")
        }
    }
}
