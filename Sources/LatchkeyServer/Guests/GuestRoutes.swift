import Foundation
import HTTPTypes
import Hummingbird
import LatchkeyAPI

/// `POST /api/v1/auth/guest` with `X-Device-ID`: a guest token and the guest's limitations.
@available(LatchkeyServer 1.0, *)
struct GuestRoutes {
    let guests: GuestService
    let limiter: RateLimiter
    let limits: AbuseLimits

    func add(to router: RouterGroup<LatchkeyRequestContext>) {
        router.post("auth/guest") { request, context in
            try await self.limiter.limiting(self.limits.guest, key: context.limitKey(of: request, trustedProxies: self.limits.trustedProxies)) {
                let deviceID = try request.requireDeviceID()
                return try tokenResponse(try await self.guests.start(deviceID: deviceID), status: .created)
            }
        }
    }
}

@available(LatchkeyServer 1.0, *)
extension Request {
    /// The canonical device UUID of `X-Device-ID`, or 400 `invalid_header` naming the header.
    func requireDeviceID() throws -> String {
        guard let value = self.headers[HTTPField.Name(LatchkeyHeader.deviceID)!], !value.isEmpty else {
            throw APIError.badRequest("Missing X-Device-ID header: send the device UUID.", code: .invalidHeader)
        }
        guard let deviceID = UUID.canonical(value) else {
            throw APIError.badRequest("The X-Device-ID header must be a UUID.", code: .invalidHeader)
        }
        return deviceID
    }
}
