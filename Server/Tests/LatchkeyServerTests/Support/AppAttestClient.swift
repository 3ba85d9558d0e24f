import Crypto
import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyAppAttest
import LatchkeyAppAttestPeer
import LatchkeyServer
import Testing
import X509

/// A server whose App Attest trusts a test authority (`app-attest.roots`: its root as PEM), at the authority's time.
struct AppAttestBench: Sendable {
    let authority: TestAttestationAuthority

    init() throws { self.authority = try TestAttestationAuthority() }

    /// Runs `body` against a live server with App Attest under `policy`; `configure` may change more.
    func withServer<T: Sendable>(
        policy: AppAttestConfiguration.Policy, configure: (inout LatchkeyConfiguration) -> Void = { _ in },
        _ body: @Sendable (any TestClientProtocol, TestServer) async throws -> T
    ) async throws -> T {
        let root = try self.authority.root.serializeAsPEM().pemString
        let server = try await TestServer.make(clock: ManualClock(start: TestAttestationAuthority.now)) { configuration in
            configuration.appAttest.policy = policy
            configuration.appAttest.appIDs = [TestAttestationAuthority.appID]
            configuration.appAttest.roots = [root]
            configuration.appAttest.limit.limit = 0
            configuration.appAttest.challengeLimit.limit = 0
            configure(&configuration)
        }
        return try await server.test(.live) { client in try await body(client, server) }
    }

    /// An `app_attest` for `device` over a fresh challenge from the server.
    func evidence(
        _ client: some TestClientProtocol, _ device: TestAttestationAuthority.Device, _ parts: TestAttestationAuthority.Parts = .init()
    ) async throws -> AppAttestEvidence {
        let challenge = try await client.appAttestChallenge()
        let bytes = try require(AppAttestBase64.decode(challenge))
        let object = try self.authority.attestation(device, clientDataHash: Array(SHA256.hash(data: bytes)), parts)
        return AppAttestEvidence(
            keyID: AppAttestBase64.encode(device.keyID), attestationObject: AppAttestBase64.encode(object), challenge: challenge)
    }
}

extension TestClientProtocol {
    func appAttestChallenge() async throws -> String {
        let response = try await self.send(.post, "/api/v1/app-attest/challenge")
        guard response.status == .ok else { throw AppAttestTestFailure(description: "challenge: \(response.status) \(response.text)") }
        return try response.decode(AppAttestChallengeResponse.self).challenge
    }

    /// `POST /api/v1/auth/register-device` with `evidence`.
    func registerDevice(_ deviceID: String, evidence: AppAttestEvidence?) async throws -> TestResponse {
        try await self.send(.post, "/api/v1/auth/register-device", body: RegisterDeviceRequest(deviceID: deviceID, appAttest: evidence))
    }

    /// `POST /api/v1/auth/guest` for `deviceID` with `body` (exact bytes) and extra headers.
    func guest(_ deviceID: String, body: String? = nil, headers extra: HTTPFields = [:]) async throws -> TestResponse {
        var headers = extra
        headers[HTTPField.Name("X-Device-ID")!] = deviceID
        return try await self.send(.post, "/api/v1/auth/guest", json: body, headers: headers)
    }

    /// A guest request of an attested `device` proving itself with an assertion at `counter` over a fresh challenge.
    func guest(
        _ deviceID: String, assertingWith device: TestAttestationAuthority.Device, counter: UInt32, signer: P256.Signing.PrivateKey? = nil
    ) async throws -> TestResponse {
        let challenge = try await self.appAttestChallenge()
        let clientDataHash = AppAttestVerifier.assertionClientDataHash(
            method: "POST", path: "/api/v1/auth/guest", body: [], challenge: AppAttestBase64.decode(challenge) ?? [])
        let assertion = try TestAttestationAuthority.assertion(device, clientDataHash: clientDataHash, counter: counter, signer: signer)
        return try await self.guest(
            deviceID,
            headers: [
                HTTPField.Name(LatchkeyHeader.appAttestAssertion)!: AppAttestBase64.encode(assertion),
                HTTPField.Name(LatchkeyHeader.appAttestChallenge)!: challenge,
            ])
    }
}

struct AppAttestTestFailure: Error, CustomStringConvertible {
    let description: String
}

/// `#require` for helpers outside a test.
private func require<T>(_ value: T?) throws -> T {
    guard let value else { throw AppAttestTestFailure(description: "a value was missing") }
    return value
}
