import Foundation
import LatchkeyAPI
import LatchkeyClient

/// An ``AppAttestService`` that makes numbered keys, answers with fixed bytes and records every call; errors can be
/// queued for the next attestations and assertions.
final class FakeAppAttestService: AppAttestService, @unchecked Sendable {
    struct Call: Equatable {
        var keyID: String
        var clientDataHash: Data
    }

    private let lock = NSLock()
    private let supported: Bool
    private var keys = 0
    private var attestErrors: [any Error] = []
    private var assertErrors: [any Error] = []
    private var attestCalls: [Call] = []
    private var assertCalls: [Call] = []

    init(isSupported: Bool = true) { self.supported = isSupported }

    var isSupported: Bool { self.supported }

    /// The attestation object the fake returns for `keyID`.
    static func attestationObject(_ keyID: String) -> Data { Data("attestation of \(keyID)".utf8) }
    /// The assertion the fake returns for `keyID`.
    static func assertion(_ keyID: String) -> Data { Data("assertion by \(keyID)".utf8) }

    func failNextAttestations(_ errors: any Error...) { self.lock.withLock { self.attestErrors += errors } }
    func failNextAssertions(_ errors: any Error...) { self.lock.withLock { self.assertErrors += errors } }

    var generatedKeys: Int { self.lock.withLock { self.keys } }
    var attestations: [Call] { self.lock.withLock { self.attestCalls } }
    var assertions: [Call] { self.lock.withLock { self.assertCalls } }

    func generateKey() async throws -> String {
        self.lock.withLock {
            self.keys += 1
            return "key-\(self.keys)"
        }
    }

    func attestKey(_ keyID: String, clientDataHash: Data) async throws -> Data {
        try self.lock.withLock {
            self.attestCalls.append(Call(keyID: keyID, clientDataHash: clientDataHash))
            if !self.attestErrors.isEmpty { throw self.attestErrors.removeFirst() }
            return Self.attestationObject(keyID)
        }
    }

    func generateAssertion(_ keyID: String, clientDataHash: Data) async throws -> Data {
        try self.lock.withLock {
            self.assertCalls.append(Call(keyID: keyID, clientDataHash: clientDataHash))
            if !self.assertErrors.isEmpty { throw self.assertErrors.removeFirst() }
            return Self.assertion(keyID)
        }
    }
}

/// A server's App Attest routes, stubbed: challenges from a list, register-device and guest answering tokens that say
/// `att: true` when the request carried an attestation or an assertion, or the error the test queued.
final class AppAttestServer: @unchecked Sendable {
    static let challenges = [
        // 0xe0…0xff: its base64 has `+` and `/`, so an echo that re-encodes or escapes would show.
        "4OHi4+Tl5ufo6err7O3u7/Dx8vP09fb3+Pn6+/z9/v8=",
        "ERERERERERERERERERERERERERERERERERERERERERE=",
    ]

    private let lock = NSLock()
    private var handedOut = 0
    private var refusals: [String: [TransportResponse]] = [:]

    /// The next request to `path` gets `response`.
    func refuseNext(_ path: String, with response: TransportResponse) { self.lock.withLock { self.refusals[path, default: []].append(response) } }

    var challengesHandedOut: Int { self.lock.withLock { self.handedOut } }

    func answer(_ request: TransportRequest) -> TransportResponse {
        let path = request.url.path
        if let refusal = self.lock.withLock({ self.refusals[path]?.isEmpty == false ? self.refusals[path]?.removeFirst() : nil }) { return refusal }
        switch path {
        case "/api/v1/app-attest/challenge":
            let challenge = self.lock.withLock {
                defer { self.handedOut += 1 }
                return Self.challenges[self.handedOut % Self.challenges.count]
            }
            return .json(200, AppAttestChallengeResponse(challenge: challenge))
        case "/api/v1/auth/register-device":
            let attested = (try? request.decodeBody(RegisterDeviceRequest.self).appAttest?.keyID) != nil
            return .json(201, Samples.pair(1).with(accessToken: Self.token(attested: attested)))
        case "/api/v1/auth/guest":
            let attested =
                request.header(LatchkeyHeader.appAttestAssertion) != nil || (try? request.decodeBody(GuestSessionRequest.self).appAttest) != nil
            return .json(200, GuestSessionResponse(accessToken: Self.token(attested: attested), expiresIn: 3600, limitations: GuestLimitations()))
        default:
            return TransportResponse(status: 404)
        }
    }

    /// A JWT-shaped token (unsigned: the SDK reads, the server verifies) whose claims say `att: true` when `attested`.
    static func token(attested: Bool) -> String {
        let claims = attested ? #"{"sub":"user","att":true}"# : #"{"sub":"user"}"#
        return "e30." + Base64URL.encode(Data(claims.utf8)) + ".c2ln"
    }
}

extension TokenPairResponse {
    func with(accessToken: String) -> TokenPairResponse {
        var pair = self
        pair.accessToken = accessToken
        return pair
    }
}
