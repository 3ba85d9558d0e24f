import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyServer
import LatchkeyTestSupport
import Testing

/// Bad input to the second-factor routes is a 4xx with the error envelope, never a 500; a factor ID that is no UUID or
/// another user's factor is not found and changes nothing. Device users (no address needed).
@Suite(.timeLimit(.minutes(3)))
struct SecondFactorInputTests {
    static let malformed: [(label: String, json: String)] = [
        ("malformed JSON", "{"), ("truncated JSON", #"{"mfa_token": "abc"#), ("JSON array", "[]"), ("JSON null", "null"),
        ("JSON string", #""123456""#), ("number as code", #"{"mfa_token": "abc", "code": 123456}"#),
        ("boolean as code", #"{"mfa_token": "abc", "code": true}"#), ("number as mfa_token", #"{"mfa_token": 42, "code": "123456"}"#),
        ("object as recovery_code", #"{"mfa_token": "abc", "recovery_code": {"$ne": ""}}"#),
        ("array as code", #"{"code": ["123456"]}"#),
    ]

    @Test(arguments: Self.malformed.map(\.label))
    func aMalformedVerifyBodyIs400InvalidRequest(label: String) async throws {
        let json = try #require(Self.malformed.first { $0.label == label }).json
        try await withServer(.router) { client, _ in
            let device = try await client.registerDevice()
            for bearer in [nil, device.accessToken] {
                let response = try await client.send(.post, "/api/v1/mfa/verify", bearer: bearer, json: json)
                #expect(response.status == .badRequest, "\(bearer == nil ? "sign-in" : "step-up"): \(response.status) \(response.text)")
                #expect(response.envelope?.error.code == .invalidRequest, "\(response.text)")
            }
        }
    }

    /// Neither a code nor a recovery code, or both, or no `mfa_token` and no Bearer: refused with the envelope.
    @Test(arguments: [
        #"{"mfa_token": "abc"}"#, #"{"mfa_token": "abc", "code": "123456", "recovery_code": "AAAAA-AAAAA"}"#, #"{"code": "123456"}"#, "{}",
    ])
    func anIncompleteVerifyBodyIsA4xxWithTheEnvelope(json: String) async throws {
        try await withServer(.router) { client, _ in
            let response = try await client.send(.post, "/api/v1/mfa/verify", json: json)
            #expect((400..<500).contains(response.status.code), "\(response.status) \(response.text)")
            #expect(response.envelope != nil, "\(response.text)")
        }
    }

    @Test(arguments: ["/api/v1/mfa/verify", "/api/v1/mfa/totp/3f2504e0-4f89-11d3-9a0c-0305e82c3301/confirm"])
    func aHugeBodyIs413(path: String) async throws {
        try await withServer(.live) { client, _ in
            let device = try await client.registerDevice()
            let json = #"{"code": "\#(String(repeating: "1", count: 70_000))"}"#
            let response = try await client.send(.post, path, bearer: device.accessToken, json: json)
            #expect(response.status == .contentTooLarge, "\(response.text)")
            #expect(response.envelope?.error.code == .payloadTooLarge)
        }
    }

    @Test func aConfirmBodyOfTheWrongShapeIs400() async throws {
        try await withServer(.router) { client, server in
            let device = try await client.registerDevice()
            let enrolment = try await client.enrollTOTP(bearer: device.accessToken).decode(TOTPEnrollmentResponse.self)
            for json in ["{", #"{"code": 123456}"#, "[]", "{}"] {
                let response = try await client.send(.post, "/api/v1/mfa/totp/\(enrolment.factorID)/confirm", bearer: device.accessToken, json: json)
                #expect(response.status == .badRequest, "\(json): \(response.status) \(response.text)")
                #expect(response.envelope != nil, "\(response.text)")
            }
        }
    }

    @Test func aFactorIDThatIsNoUUIDIsA4xx() async throws {
        try await withServer(.router) { client, _ in
            let device = try await client.registerDevice()
            for id in ["not-a-uuid", "1%27%20OR%201%3D1", String(repeating: "f", count: 300)] {
                let confirm = try await client.confirmTOTP(id, code: "123456", bearer: device.accessToken)
                #expect((400..<500).contains(confirm.status.code), "confirm \(id): \(confirm.status) \(confirm.text)")
                #expect(confirm.envelope != nil)
                let remove = try await client.removeFactor(id, bearer: device.accessToken)
                #expect((400..<500).contains(remove.status.code), "delete \(id): \(remove.status) \(remove.text)")
                #expect(remove.envelope != nil)
            }
        }
    }

    /// Another user's factor ID is unknown to this user: neither confirmed nor removed by them, and still the owner's.
    @Test func anotherUsersFactorIsNotFoundAndUntouched() async throws {
        let server = try await TestServer.make()
        try await server.test(.live) { client in
            let owner = try await client.registerDevice()
            let factor = try await client.confirmedFactor(bearer: owner.accessToken, at: server.clock.now())
            let pending = try await client.enrollTOTP(bearer: try await client.registerDevice().accessToken)
                .decode(TOTPEnrollmentResponse.self)
            let stranger = try await client.registerDevice()
            server.clock.advance(by: TOTPGenerator.period)

            let remove = try await client.removeFactor(factor.factorID, bearer: stranger.accessToken)
            #expect(remove.status == .notFound, "\(remove.status) \(remove.text)")
            #expect(remove.envelope?.error.code == .notFound)
            let code = try TOTPGenerator(secret: pending.secret).code(at: server.clock.now())
            let confirm = try await client.confirmTOTP(pending.factorID, code: code, bearer: stranger.accessToken)
            #expect(confirm.status == .notFound, "\(confirm.status) \(confirm.text)")
            #expect(confirm.envelope?.error.code == .notFound)
            #expect(try await client.factors(bearer: stranger.accessToken).decode(MFAFactorsResponse.self).factors.isEmpty)

            let owners = try await client.factors(bearer: owner.accessToken).decode(MFAFactorsResponse.self).factors
            #expect(owners.map(\.id) == [factor.factorID] && owners.map(\.confirmed) == [true])
        }
    }

    @Test func theRoutesNeedABearer() async throws {
        try await withServer(.router) { client, _ in
            let id = "3f2504e0-4f89-11d3-9a0c-0305e82c3301"
            let calls: [(HTTPRequest.Method, String)] = [
                (.post, "/api/v1/mfa/totp"), (.post, "/api/v1/mfa/totp/\(id)/confirm"), (.get, "/api/v1/mfa/factors"),
                (.delete, "/api/v1/mfa/factors/\(id)"), (.post, "/api/v1/mfa/recovery-codes"),
            ]
            for (method, path) in calls {
                let response = try await client.send(method, path, json: method == .post ? #"{"code": "123456"}"# : nil)
                #expect(response.status == .unauthorized, "\(method) \(path): \(response.status)")
                #expect(response.envelope != nil)
            }
        }
    }
}
