import Hummingbird
import LatchkeyAPI

/// `POST /api/v1/app-attest/challenge`: a single-use challenge for an App Attest attestation or assertion.
struct AppAttestRoutes {
    let appAttest: AppAttestService
    let limiter: RateLimiter
    let trustedProxies: Set<String>

    func add(to api: APIRoutes<LatchkeyRequestContext>) {
        api.add(
            Self.challenge,
            requirements: [
                .limited(
                    by: self.appAttest.configuration.challengeLimit, limiter: self.limiter, trustedProxies: self.trustedProxies,
                    counting: "challenges")
            ]
        ) { _, _ in
            Answer.tokens(try await self.appAttest.challenge())
        }
    }

    static let challenge = APIOperation(
        .post, "/api/v1/app-attest/challenge", id: "appAttestChallenge", tag: "Auth", summary: "Get an App Attest challenge",
        description: """
            No authentication. A challenge for App Attest: 32 random bytes, standard base64, usable once (any use spends it) for 5 \
            minutes. For an attestation the app calls `DCAppAttestService.attestKey(keyID, clientDataHash: SHA256(the 32 decoded \
            bytes))` and sends `app_attest {key_id, attestation_object, challenge}` (the challenge exactly as received) to \
            `POST /api/v1/auth/register-device` or `POST /api/v1/auth/guest`; for an assertion it sends it as \
            `X-App-Attest-Challenge`. Answered whenever `app-attest.policy` is not `off` or `app-attest.app-ids` is set; otherwise 404.
            """,
        outcomes: [
            .init(200, "A challenge.", body: AppAttestChallengeResponse.self, headers: ["Cache-Control"]),
            .notFound("App Attest is off (`app-attest.policy` off and no `app-attest.app-ids`)."), .unavailable,
        ])
}
