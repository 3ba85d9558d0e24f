import Hummingbird
import LatchkeyAPI

/// `POST /api/v1/auth/register-device`: 201 for a new device (with a `device_secret` when it came without a DPoP
/// proof), 200 for a known one that proved itself.
@available(LatchkeyServer 1.0, *)
struct DeviceRoutes {
    let devices: DeviceService
    let dpop: DPoPVerifier
    let maxBodySize: Int
    let limiter: RateLimiter
    let limits: AbuseLimits

    func add(to router: RouterGroup<LatchkeyRequestContext>) {
        router.post("auth/register-device") { request, context in
            // Checked before the limit counts: a proof answered "use this nonce" is not an attempt.
            let proof = try self.dpop.proof(of: request)
            return try await self.limiter.limiting(
                self.limits.registerDevice, key: context.limitKey(of: request, trustedProxies: self.limits.trustedProxies)
            ) {
                var request = request
                let body = try await request.decodeJSON(as: RegisterDeviceRequest.self, limit: self.maxBodySize)
                let deviceID = try canonicalUUID(body.deviceID, field: "device_id")
                let (tokens, created) = try await self.devices.register(deviceID: deviceID, deviceSecret: body.deviceSecret, proof: proof)
                return try tokenResponse(tokens, status: created ? .created : .ok)
            }
        }
    }
}
