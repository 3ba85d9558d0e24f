import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyServer
import Testing

/// Sender-constrained refresh tokens (RFC 9449 DPoP): a device that registers with a key proves itself with it;
/// a refresh token copied off the device is worthless without that key.
@Suite struct DPoPTests {
    static func pair(_ response: TestResponse) throws -> TokenPairResponse {
        guard response.status == .ok || response.status == .created else { throw TestFailure("answered \(response.status): \(response.text)") }
        return try response.decode(TokenPairResponse.self)
    }

    @Test(arguments: Transport.allCases)
    func aRefreshTokenCopiedToAClientWithoutTheKeyIsRefusedAndLogged(transport: Transport) async throws {
        let capture = LogCapture()
        let server = try await TestServer.make(logger: capture.logger())
        try await server.test(transport) { client in
            let key = DPoPKey()
            let registered = try Self.pair(try await client.registerDevice(key: key, at: server.clock.now()))
            // A thief with the refresh token and no key: no proof, or a proof of its own key.
            let bare = try await client.refresh(registered.refreshToken, key: nil, at: server.clock.now())
            expectUnauthorized(bare, code: .invalidGrant)
            let otherKey = try await client.refresh(registered.refreshToken, key: DPoPKey(), at: server.clock.now())
            expectUnauthorized(otherKey, code: .invalidGrant)
            #expect(capture.lines.contains { $0.message.contains("without its session's DPoP key") })
            #expect(metricValue("latchkey_refresh_without_proof_total", in: try await client.metricsText()) == 2)
            // The device, with its key, refreshes: nothing was spent by the thief's tries.
            let refreshed = try Self.pair(try await client.refresh(registered.refreshToken, key: key, at: server.clock.now()))
            #expect(refreshed.sessionID == registered.sessionID)
            try await expectAccepted(refreshed.accessToken, by: client)
        }
    }

    @Test func aReplayedProofIsRefused() async throws {
        try await withServer(.router) { client, server in
            let key = DPoPKey()
            let registered = try Self.pair(try await client.registerDevice(key: key, at: server.clock.now()))
            let nonce = try await client.dpopNonce()
            let proof = try key.proof("POST", "/api/v1/auth/refresh", nonce: nonce, iat: server.clock.now())
            let body = #"{"refresh_token": "\#(registered.refreshToken)"}"#
            let first = try Self.pair(try await client.sendProving("/api/v1/auth/refresh", json: body, proof: proof))
            let replay = try await client.sendProving(
                "/api/v1/auth/refresh", json: #"{"refresh_token": "\#(first.refreshToken)"}"#, proof: proof)
            #expect(replay.status == .badRequest)
            #expect(replay.envelope?.error.code == .invalidDPoPProof)
            // The replay spent nothing: a fresh proof refreshes the successor.
            #expect(try await client.refresh(first.refreshToken, key: key, at: server.clock.now()).status == .ok)
        }
    }

    @Test func aDeviceWhoseClockIsAnHourOffStillProvesItself() async throws {
        try await withServer(.router) { client, server in
            let key = DPoPKey()
            let nonce = try await client.dpopNonce()
            let proof = try key.proof("POST", "/api/v1/auth/register-device", nonce: nonce, iat: server.clock.now() - 3600)
            let response = try await client.sendProving(
                "/api/v1/auth/register-device", json: #"{"device_id": "\#(UUID().uuidString)"}"#, proof: proof)
            #expect(response.status == .created)
        }
    }

    @Test func aProofWithoutTheServersNonceIsAnsweredWithOne() async throws {
        try await withServer(.router) { client, server in
            let key = DPoPKey()
            let body = #"{"device_id": "\#(UUID().uuidString)"}"#
            let proof = try key.proof("POST", "/api/v1/auth/register-device", nonce: nil, iat: server.clock.now())
            let response = try await client.sendProving("/api/v1/auth/register-device", json: body, proof: proof)
            #expect(response.status == .badRequest)
            #expect(response.envelope?.error.code == .useDPoPNonce)
            let nonce = try #require(response.headers[HTTPField.Name("DPoP-Nonce")!])
            let again = try key.proof("POST", "/api/v1/auth/register-device", nonce: nonce, iat: server.clock.now())
            #expect(try await client.sendProving("/api/v1/auth/register-device", json: body, proof: again).status == .created)
            // A nonce from long ago is stale: a new one is asked for.
            server.clock.advance(by: 7200)
            let stale = try key.proof("POST", "/api/v1/auth/register-device", nonce: nonce, iat: server.clock.now())
            #expect(try await client.sendProving("/api/v1/auth/register-device", json: body, proof: stale).envelope?.error.code == .useDPoPNonce)
        }
    }

    @Test(arguments: ["method", "url", "old", "future", "type", "signature", "twice"])
    func aProofThatDoesNotNameThisRequestIsRefused(flaw: String) async throws {
        try await withServer(.router) { client, server in
            let key = DPoPKey()
            let nonce = try await client.dpopNonce()
            let now = server.clock.now()
            let path = "/api/v1/auth/register-device"
            var proofs: [String]
            switch flaw {
            case "method": proofs = [try key.proof("GET", path, nonce: nonce, iat: now)]
            case "url": proofs = [try key.proof("POST", "/api/v1/auth/refresh", nonce: nonce, iat: now)]
            case "old": proofs = [try key.proof("POST", path, nonce: nonce, iat: now - 2 * 86_400)]
            case "future": proofs = [try key.proof("POST", path, nonce: nonce, iat: now + 2 * 86_400)]
            case "type": proofs = [try key.proof("POST", path, nonce: nonce, iat: now, type: "JWT")]
            case "signature": proofs = [try Forge.flippingSignatureBit(try key.proof("POST", path, nonce: nonce, iat: now))]
            default: proofs = [try key.proof("POST", path, nonce: nonce, iat: now), try key.proof("POST", path, nonce: nonce, iat: now)]
            }
            var headers: HTTPFields = [:]
            for proof in proofs { headers.append(HTTPField(name: HTTPField.Name("DPoP")!, value: proof)) }
            let deviceID = UUID()
            let response = try await client.send(.post, path, json: #"{"device_id": "\#(deviceID.uuidString)"}"#, headers: headers)
            #expect(response.status == .badRequest)
            #expect(response.envelope?.error.code == .invalidDPoPProof)
            #expect(try await server.services.users.user(id: deviceID.uuidString.lowercased()) == nil)
        }
    }

    @Test(arguments: Transport.allCases)
    func aKeyedDeviceGetsNoSecretAndSignsInAgainWithItsKeyOnly(transport: Transport) async throws {
        try await withServer(transport) { client, server in
            let key = DPoPKey()
            let deviceID = UUID()
            let first = try await client.registerDevice(deviceID, key: key, at: server.clock.now())
            #expect(first.status == .created)
            #expect(try first.decode(TokenPairResponse.self).deviceSecret == nil)  // nothing to steal, nothing travels
            // Again, with its key: the same user.
            let again = try await client.registerDevice(deviceID, key: key, at: server.clock.now())
            #expect(again.status == .ok)
            #expect(try again.decode(TokenPairResponse.self).userID == deviceID.uuidString.lowercased())
            // Another key, or no proof at all: refused.
            expectUnauthorized(try await client.registerDevice(deviceID, key: DPoPKey(), at: server.clock.now()), code: .invalidDeviceSecret)
            let bare = try await client.send(.post, "/api/v1/auth/register-device", body: RegisterDeviceRequest(deviceID: deviceID.uuidString))
            expectUnauthorized(bare, code: .invalidDeviceSecret)
        }
    }

    @Test func aKeylessDeviceMovesToAKeyWithItsSecretAndItsSessionsAreBound() async throws {
        try await withServer(.router) { client, server in
            let legacy = try await client.registerDevice()
            let key = DPoPKey()
            let nonce = try await client.dpopNonce()
            let upgraded = try Self.pair(
                try await client.sendProving(
                    "/api/v1/auth/register-device",
                    json: #"{"device_id": "\#(legacy.userID)", "device_secret": "\#(legacy.deviceSecret ?? "")"}"#,
                    proof: try key.proof("POST", "/api/v1/auth/register-device", nonce: nonce, iat: server.clock.now())))
            expectUnauthorized(try await client.refresh(upgraded.refreshToken, key: nil, at: server.clock.now()), code: .invalidGrant)
            #expect(try await client.refresh(upgraded.refreshToken, key: key, at: server.clock.now()).status == .ok)
            // From now on the secret alone is not enough: the device proves itself with its key.
            expectUnauthorized(
                try await client.send(
                    .post, "/api/v1/auth/register-device",
                    body: RegisterDeviceRequest(
                        deviceID: legacy.userID, deviceSecret: legacy.deviceSecret)), code: .invalidDeviceSecret)
        }
    }

    @Test func keylessClientsKeepWorkingByDefaultAndAreRefusedWhenProofsAreRequired() async throws {
        try await withServer(.router) { client, _ in
            let legacy = try await client.registerDevice()
            #expect(try await client.refresh(legacy.refreshToken).status == .ok)
        }
        try await withServer(.router, configure: { $0.tokens.dpop = .required }) { client, server in
            let response = try await client.send(.post, "/api/v1/auth/register-device", body: RegisterDeviceRequest(deviceID: UUID().uuidString))
            #expect(response.status == .badRequest)
            #expect(response.envelope?.error.code == .invalidDPoPProof)
            let key = DPoPKey()
            let keyed = try Self.pair(try await client.registerDevice(key: key, at: server.clock.now()))
            #expect(try await client.refresh(keyed.refreshToken, key: key, at: server.clock.now()).status == .ok)
        }
    }
}
