import Foundation
import HTTPTypes
import Hummingbird
import LatchkeyAPI
import NIOCore

/// `POST /api/v1/auth/guest` with `X-Device-ID`: a guest token and the guest's limitations.
struct GuestRoutes {
    let guests: GuestService
    let limiter: RateLimiter
    let limits: AbuseLimits

    func add(to api: APIRoutes<LatchkeyRequestContext>) {
        api.add(
            Self.start,
            requirements: [
                .limited(by: self.limits.guest, limiter: self.limiter, trustedProxies: self.limits.trustedProxies, counting: "guest sessions")
            ]
        ) { request, context in
            let deviceID = try request.requireDeviceID()
            // With App Attest off the body is not read at all, as before it existed.
            guard self.guests.appAttest?.configuration.isEnabled == true else {
                return Answer.tokens(try await self.guests.start(deviceID: deviceID), status: .created)
            }
            var request = request
            // The exact bytes received: an attested device's assertion covers their SHA-256.
            let body = Array(try await request.collectBody(upTo: context.maxUploadSize).readableBytesView)
            let evidence = body.isEmpty ? nil : try await request.decode(as: GuestSessionRequest.self, context: context).appAttest
            let answer = try await self.guests.start(
                deviceID: deviceID, evidence: evidence, assertion: request.headers[values: HTTPField.Name(LatchkeyHeader.appAttestAssertion)!].first,
                challenge: request.headers[values: HTTPField.Name(LatchkeyHeader.appAttestChallenge)!].first, body: body,
                client: context.limitKey(of: request, trustedProxies: self.limits.trustedProxies))
            return Answer.tokens(answer, status: .created)
        }
    }

    static let start = APIOperation(
        .post, "/api/v1/auth/guest", id: "startGuestSession", tag: "Auth", summary: "Start a guest session",
        description:
            "A short-lived guest access token for the device in `X-Device-ID`, without registration or refresh token; every call gives a "
            + "new one. Its `sub` is `guest:<device UUID>`, never a user's ID, and its `aud` the guest audience. The body reports the "
            + "guest's `limitations` from the configuration. A missing or malformed `X-Device-ID` is 400 `invalid_header`.\n\n"
            + "App Attest (`app-attest.policy` other than `off`): the optional body `{\"app_attest\": …}` attests the device (a key "
            + "attested over a challenge from `POST /api/v1/app-attest/challenge`, or a debug token); the token of an attested device "
            + "carries `att: true`. An attested device proves itself on every call with `X-App-Attest-Assertion` over a fresh "
            + "`X-App-Attest-Challenge`: clientDataHash = SHA256(`POST` ‖ `/api/v1/auth/guest` ‖ SHA256(body bytes) ‖ challenge bytes), "
            + "the counter above the last one. Under `guests` and `required` an unattested device is refused (403 `attestation_required`) "
            + "unless `app-attest.unattested-guest-limit` is set (`guests`); under `report` it gets its token on that budget tier.",
        parameters: [
            .init("X-Device-ID", in: .header, required: true, "The device UUID.", schema: .string(format: "uuid")),
            .init(
                "X-App-Attest-Assertion", in: .header, required: false,
                "An attested device's App Attest assertion (base64 CBOR `{signature, authenticatorData}`) over this request.",
                schema: .string()),
            .init(
                "X-App-Attest-Challenge", in: .header, required: false,
                "The fresh challenge (from `POST /api/v1/app-attest/challenge`) the assertion covers; spent by this request.", schema: .string()),
        ],
        requestBody: GuestSessionRequest.self, requestBodyOptional: true, requestExample: #"{"app_attest": {"debug_token": "…"}}"#,
        outcomes: [
            .init(201, "A guest token.", body: GuestSessionResponse.self, headers: ["Cache-Control"]),
            .badRequest(
                "`X-Device-ID` is missing or not a UUID (`invalid_header`); the body is malformed (`invalid_request`); the `app_attest` "
                    + "did not verify (`invalid_attestation`) or its challenge is unknown, used or expired (`invalid_challenge`)."),
            .init(401, "An attested device's assertion is missing or did not verify (`invalid_assertion`).", headers: ["WWW-Authenticate"]),
            .forbidden("`app-attest.policy` gives guest tokens to attested devices only (`attestation_required`)."),
            .tooLarge, .unavailable,
        ])
}
