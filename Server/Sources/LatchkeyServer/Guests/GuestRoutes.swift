import Foundation
import HTTPTypes
import Hummingbird
import LatchkeyAPI

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
        ) { request, _ in
            Answer.tokens(try await self.guests.start(deviceID: try request.requireDeviceID()), status: .created)
        }
    }

    static let start = APIOperation(
        .post, "/api/v1/auth/guest", id: "startGuestSession", tag: "Auth", summary: "Start a guest session",
        description:
            "A short-lived guest access token for the device in `X-Device-ID`, without registration or refresh token; every call gives a "
            + "new one. Its `sub` is `guest:<device UUID>`, never a user's ID, and its `aud` the guest audience. The body reports the "
            + "guest's `limitations` from the configuration. A missing or malformed `X-Device-ID` is 400 `invalid_header`.",
        parameters: [.init("X-Device-ID", in: .header, required: true, "The device UUID.", schema: .string(format: "uuid"))],
        outcomes: [
            .init(201, "A guest token.", body: GuestSessionResponse.self, headers: ["Cache-Control"]),
            .badRequest("`X-Device-ID` is missing or not a UUID (`invalid_header`)."), .unavailable,
        ])
}
