import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyPasskeyPeer
import LatchkeyServer
import Testing

/// `limits.passkeys` (60 per 5 minutes per client IP by default; 0 turns it off): the options routes and sign-ins
/// together.
@Suite(.timeLimit(.minutes(3)))
struct PasskeyLimitTests {
    @Test func theDefaultIsSixtyPerFiveMinutes() async throws {
        let configuration = try await LatchkeyConfiguration.load(overrides: [:], configFile: nil, environment: [:])
        #expect(configuration.passkeys.limit == RateLimitPolicy(name: "passkeys", limit: 60, window: 300))
    }

    @Test func theLimitIsReadFromItsSettings() async throws {
        let configuration = try await LatchkeyConfiguration.load(
            overrides: ["limits.passkeys.limit": .int(5), "limits.passkeys.window": .double(60)], configFile: nil, environment: [:])
        #expect(configuration.passkeys.limit == RateLimitPolicy(name: "passkeys", limit: 5, window: 60))
    }

    /// Four requests of a limit of four — options of both ceremonies, a sign-in, options again — then 429 with
    /// `Retry-After` on each of the limited routes; once the window has passed, requests go through again.
    @Test func optionsAndSignInsCountTogetherAndTheOneOverGets429WithRetryAfter() async throws {
        let server = try await TestServer.withPasskeys(keys: ["limits.passkeys.limit": "4", "limits.passkeys.window": "300.0"])
        try await server.test(.router) { client in
            var authenticator = SoftwareAuthenticator()
            let device = try await client.registerDevice()
            let ceremony = try await client.beginPasskeyRegistration(bearer: device.accessToken)  // 1
            #expect(
                try await client.finishPasskeyRegistration(ceremony.challengeID, authenticator.register(ceremony), bearer: device.accessToken)
                    .status == .created)
            let signIn = try await client.beginPasskeySignIn()  // 2
            let signedIn = try await client.finishPasskeySignIn(signIn.challengeID, authenticator.assert(signIn))  // 3
            #expect(signedIn.status == .ok, "\(signedIn.text)")
            let last = try await client.passkeyAuthenticationOptions()  // 4
            #expect(last.status == .ok)
            #expect(last.headers[HTTPField.Name("X-RateLimit-Remaining")!] == "0")

            let held = [
                try await client.passkeyAuthenticationOptions(), try await client.passkeyRegistrationOptions(bearer: device.accessToken),
                try await client.finishPasskeySignIn(signIn.challengeID, authenticator.assert(signIn)),
            ]
            for answer in held {
                #expect(answer.status == .tooManyRequests, "\(answer.text)")
                #expect(answer.envelope?.error.code == .rateLimited)
                let retryAfter = try #require(answer.headers[.retryAfter].flatMap { Int($0) }, "no Retry-After")
                #expect((1...300).contains(retryAfter))
            }
            server.clock.advance(by: 301)
            #expect(try await client.passkeyAuthenticationOptions().status == .ok)
        }
    }

    /// The limit is per client IP: another address is not held back.
    @Test func anotherClientIsNotHeldBack() async throws {
        let server = try await TestServer.withPasskeys(keys: ["limits.passkeys.limit": "1"]) { $0.limits.trustedProxies = ["127.0.0.1"] }
        try await server.test(.live) { client async throws in
            func options(from address: String) async throws -> TestResponse {
                try await client.send(
                    .post, "/api/v1/passkeys/authenticate/options", json: "{}", headers: [HTTPField.Name("X-Forwarded-For")!: address])
            }
            #expect(try await options(from: "203.0.113.1").status == .ok)
            #expect(try await options(from: "203.0.113.1").status == .tooManyRequests)
            #expect(try await options(from: "203.0.113.2").status == .ok)
        }
    }

    @Test func aLimitOfZeroTurnsItOff() async throws {
        let server = try await TestServer.withPasskeys(keys: ["limits.passkeys.limit": "0"])
        try await server.test(.router) { client in
            for _ in 0..<100 {
                let answer = try await client.passkeyAuthenticationOptions()
                #expect(answer.status == .ok)
                #expect(answer.headers[HTTPField.Name("X-RateLimit-Limit")!] == nil)
            }
        }
    }
}
