import Hummingbird
import LatchkeyAPI

/// `POST /api/v1/auth/register-device`: 201 with a `device_secret` for a new device, 200 for a known one.
@available(LatchkeyServer 1.0, *)
struct DeviceRoutes {
    let devices: DeviceService
    let maxBodySize: Int
    let limiter: RateLimiter
    let limits: AbuseLimits

    func add(to router: RouterGroup<LatchkeyRequestContext>) {
        router.post("auth/register-device") { request, context in
            try await self.limiter.limiting(self.limits.registerDevice, key: context.clientIP(of: request, trustedProxies: self.limits.trustedProxies)) {
                var request = request
                let body = try await request.decodeJSON(as: RegisterDeviceRequest.self, limit: self.maxBodySize)
                let deviceID = try canonicalUUID(body.deviceID, field: "device_id")
                let (tokens, created) = try await self.devices.register(deviceID: deviceID, deviceSecret: body.deviceSecret)
                return try jsonResponse(tokens, status: created ? .created : .ok)
            }
        }
    }
}
