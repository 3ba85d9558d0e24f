import Foundation
import LatchkeyAPI

extension LatchkeySession {
    /// What a sign-in carries to prove this is a genuine copy of the app (``Configuration/appAttest``).
    enum AppAttestProof: Sendable {
        /// `app_attest` in the body: an attestation of the device's key, or a debug token.
        case evidence(AppAttestEvidence)
        /// An attested device's assertion over the request, with the challenge it covers (the two headers).
        case assertion(challenge: String, assertion: Data)

        /// Whether a fresh challenge would change it (a debug token has none).
        var usesChallenge: Bool {
            switch self {
            case .evidence(let evidence): evidence.challenge != nil
            case .assertion: true
            }
        }

        /// Whether it is an assertion.
        var isAssertion: Bool {
            if case .assertion = self { return true }
            return false
        }

        /// What goes in the body as `app_attest`.
        var evidence: AppAttestEvidence? {
            if case .evidence(let evidence) = self { return evidence }
            return nil
        }

        /// The key an attestation in the body is of.
        var attestedKeyID: String? {
            if case .evidence(let evidence) = self { return evidence.keyID }
            return nil
        }
    }

    /// A challenge as the server sent it and its decoded bytes.
    struct AppAttestChallenge: Sendable {
        let text: String
        let bytes: Data
    }

    /// Sends a sign-in with this device's App Attest proof (`nil` when App Attest is off, unsupported, or the server
    /// offers no challenges): `send` gets the proof and returns what it issued and its access token. When the server
    /// answers `invalid_challenge`, the proof is made again over a fresh challenge and sent once more; when it answers an
    /// assertion with `attestation_required` (it does not know the device as attested), the key is attested again and
    /// sent once more; never a third time. An attestation the server accepted (its token says `att: true`) marks the key attested; one it refused
    /// (`invalid_attestation`) is forgotten, so the next sign-in attests a new key.
    ///
    /// `asserting` is the API path and body of a request an attested device proves with an assertion (guest sign-in);
    /// without it (register-device) an attested device sends nothing.
    func withAppAttest<Issued>(
        asserting request: (path: String, body: Data)? = nil, _ send: (AppAttestProof?) async throws -> (issued: Issued, accessToken: String)
    ) async throws -> Issued {
        var proof = try await self.appAttestProof(asserting: request)
        for retry in [false, true] {
            do {
                let (issued, accessToken) = try await send(proof)
                if let keyID = proof?.attestedKeyID, UnverifiedJWT.claims(of: accessToken)?["att"] as? Bool == true {
                    try? self.commit(keepingOnFailure: true, expecting: { $0?.appAttestKeyID == keyID }) { $0.appAttestKeyAttested = true }
                }
                return issued
            } catch let error as LatchkeyError where !retry && error.has(.invalidChallenge) && proof?.usesChallenge == true {
                proof = try await self.appAttestProof(asserting: request)
            } catch let error as LatchkeyError where !retry && error.has(.attestationRequired) && proof?.isAssertion == true {
                // The server does not take this device for attested (any more): attest its key again, once.
                try? self.commit(keepingOnFailure: true) { $0.appAttestKeyAttested = false }
                proof = try await self.appAttestProof(asserting: request)
            } catch let error as LatchkeyError where error.has(.invalidAttestation) && proof?.attestedKeyID != nil {
                self.forgetAppAttestKey()
                throw error
            }
        }
        throw LatchkeyError.invalidResponse  // not reached: the second attempt returns or throws
    }

    /// The proof for the next sign-in (see ``withAppAttest(asserting:_:)``).
    func appAttestProof(asserting request: (path: String, body: Data)?) async throws -> AppAttestProof? {
        guard let provider = self.configuration.appAttest else { return nil }
        let service: any AppAttestService
        switch provider.source {
        case .debugToken(let token): return .evidence(AppAttestEvidence(debugToken: token))
        case .service(let configured): service = configured
        }
        guard service.isSupported else { return nil }
        let stored = try self.loadCredentials()
        if stored.appAttestKeyAttested, request == nil { return nil }
        guard let challenge = try await self.appAttestChallenge() else { return nil }
        if let request, stored.appAttestKeyAttested, let keyID = stored.appAttestKeyID {
            let hash = AppAttestClientData.assertion(method: "POST", path: request.path, body: request.body, challenge: challenge.bytes)
            do {
                return .assertion(challenge: challenge.text, assertion: try await service.generateAssertion(keyID, clientDataHash: hash))
            } catch AppAttestServiceError.invalidKey {
                // The key is gone (the app was reinstalled, the Keychain kept its ID): a new key, attested over the same
                // challenge, which the server has not seen yet.
                self.forgetAppAttestKey()
            } catch {
                try Task.checkCancellation()
                return nil
            }
        }
        return try await self.attestation(with: service, over: challenge)
    }

    /// An attestation of the stored key over `challenge`, or of a new key when there is none; when the service refuses
    /// the key, of a new key, once.
    private func attestation(with service: any AppAttestService, over challenge: AppAttestChallenge) async throws -> AppAttestProof? {
        let hash = AppAttestClientData.attestation(challenge: challenge.bytes)
        for newKey in [false, true] {
            guard let keyID = try await self.appAttestKeyID(from: service, new: newKey) else { return nil }
            do {
                let object = try await service.attestKey(keyID, clientDataHash: hash)
                return .evidence(AppAttestEvidence(keyID: keyID, attestationObject: object.base64EncodedString(), challenge: challenge.text))
            } catch AppAttestServiceError.invalidKey where !newKey {
                self.forgetAppAttestKey()
            } catch {
                try Task.checkCancellation()
                return nil
            }
        }
        return nil
    }

    /// The stored key's ID, or (with `new`, or none stored) a new key's, stored before it is attested.
    private func appAttestKeyID(from service: any AppAttestService, new: Bool) async throws -> String? {
        if !new, let keyID = try self.loadCredentials().appAttestKeyID { return keyID }
        let keyID: String
        do {
            keyID = try await service.generateKey()
        } catch {
            try Task.checkCancellation()
            return nil
        }
        try self.commit(keepingOnFailure: true) { credentials in
            credentials.appAttestKeyID = keyID
            credentials.appAttestKeyAttested = false
        }
        return keyID
    }

    private func forgetAppAttestKey() {
        _ = try? self.commit(keepingOnFailure: true) { credentials in
            credentials.appAttestKeyID = nil
            credentials.appAttestKeyAttested = false
        }
    }

    /// A fresh challenge (`POST /api/v1/app-attest/challenge`); `nil` when the server has no such route (404: it does
    /// not do App Attest).
    private func appAttestChallenge() async throws -> AppAttestChallenge? {
        let response: AppAttestChallengeResponse
        do {
            response = try await self.send(
                LatchkeyRequest(method: "POST", path: "/api/v1/app-attest/challenge", auth: .none), decoding: AppAttestChallengeResponse.self)
        } catch let error as LatchkeyError where error.details?.status == 404 {
            return nil
        }
        guard let bytes = Data(base64Encoded: response.challenge) ?? Base64URL.decode(response.challenge).map({ Data($0) }) else {
            throw LatchkeyError.invalidResponse
        }
        return AppAttestChallenge(text: response.challenge, bytes: bytes)
    }
}

extension LatchkeySession {
    /// Encodes an `app_attest` body: sorted keys, slashes as they are (base64 has them).
    static var appAttestEncoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }
}

extension LatchkeyRequest {
    /// `request` carrying `proof`'s assertion headers, when it is an assertion.
    func proving(_ proof: LatchkeySession.AppAttestProof?) -> LatchkeyRequest {
        guard case .assertion(let challenge, let assertion) = proof else { return self }
        var request = self
        request.headers[LatchkeyHeader.appAttestAssertion] = assertion.base64EncodedString()
        request.headers[LatchkeyHeader.appAttestChallenge] = challenge
        return request
    }
}
