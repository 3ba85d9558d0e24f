import Hummingbird
import LatchkeyAPI

/// `POST /api/v1/auth/register-device`: 201 for a new device (with a `device_secret` when it came without a DPoP
/// proof), 200 for a known one that proved itself.
struct DeviceRoutes {
    let devices: DeviceService
    let dpop: DPoPVerifier
    let limiter: RateLimiter
    let limits: AbuseLimits

    func add(to api: APIRoutes<LatchkeyRequestContext>) {
        api.add(
            Self.register,
            requirements: [
                .proof(self.dpop), .issuesSessionTokens,
                .limited(
                    by: self.limits.registerDevice, limiter: self.limiter, trustedProxies: self.limits.trustedProxies, counting: "registrations"),
            ]
        ) { request, context in
            let body = try await request.decode(as: RegisterDeviceRequest.self, context: context)
            let deviceID = try canonicalUUID(body.deviceID, field: "device_id")
            let (tokens, created) = try await self.devices.register(
                deviceID: deviceID, deviceSecret: body.deviceSecret, proof: context.proof, evidence: body.appAttest,
                client: context.limitKey(of: request, trustedProxies: self.limits.trustedProxies))
            return Answer.tokens(tokens, status: created ? .created : .ok)
        }
    }

    static let register = APIOperation(
        .post, "/api/v1/auth/register-device", id: "registerDevice", tag: "Auth", summary: "Register a device and start a session",
        description: """
            Registers the device UUID as a device user (its user ID is the device UUID) and starts a session: an access token and a \
            refresh token (see Tokens in the document's description).

            A device that sends a DPoP proof (header `DPoP`, RFC 9449) is bound to the proof's key: it gets 201 without a \
            `device_secret`, registers again only with a proof made by that key (over the server nonce), and its sessions are bound to \
            the key, so its refresh tokens are worthless without it. A device without a key gets 201 and a `device_secret`, shown only \
            this once; registering that device again needs it (a proof sent along binds the device to its key from then on) and answers \
            200 (after a `logout global`, with a new `device_secret`: keep it, the old one no longer works). With `tokens.dpop` set to `required`, a registration without a proof is 400 `invalid_dpop_proof`.

            A device UUID alone never gets tokens for a registered device (it travels in `X-Device-ID` headers): when neither the \
            device's key nor its secret is proven the answer is 401 `invalid_device_secret`; when the UUID belongs to a user created by \
            `users/register` (which signs in with access codes) or to a deleted user, 409 `device_id_claimed` or `user_deleted`: the app \
            should start a new device identity.

            App Attest (`app-attest.policy` other than `off`): `app_attest {key_id, attestation_object, challenge}` (base64; the \
            challenge from `POST /api/v1/app-attest/challenge` exactly as received, clientDataHash = SHA256 of its 32 bytes) or \
            `app_attest {debug_token}` attests the device: its key is stored with the session and its tokens (refreshed ones too) \
            carry `att: true`. A failing one is 400 `invalid_attestation` (`invalid_challenge` for an unknown, used or expired \
            challenge, `invalid_request` for a value that is not base64) and nothing is stored; under `report` it is downgraded \
            instead (the device stays unattested). Under `required` a device that is not attested yet needs one (403 \
            `attestation_required`).
            """,
        requestBody: RegisterDeviceRequest.self, requestExample: #"{"device_id": "0F8FAD5B-D9CB-469F-A165-70867728950E"}"#,
        outcomes: [
            .init(
                201, "A new device user; `device_secret` once, when it came without a key.", body: TokenPairResponse.self, headers: ["Cache-Control"]),
            .init(200, "A known device proved itself: a new session.", body: TokenPairResponse.self, headers: ["Cache-Control"]),
            .badRequest(
                "The request is not valid (`invalid_request`), or its `app_attest` did not verify (`invalid_attestation`) or named an unknown, "
                    + "used or expired challenge (`invalid_challenge`)."),
            .init(401, "The device is known and did not prove itself (`invalid_device_secret`).", headers: ["WWW-Authenticate"]),
            .forbidden("`app-attest.policy` `required`: the device is not attested and sent no `app_attest` (`attestation_required`)."),
            .conflict("The device ID cannot be used (`device_id_claimed`, `user_deleted`): start a new device identity."), .tooLarge, .unavailable,
        ])
}
