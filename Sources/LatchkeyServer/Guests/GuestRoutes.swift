import Foundation
import HTTPTypes
import Hummingbird
import LatchkeyAPI

/// `POST /api/v1/auth/guest` with `X-Device-ID`: a guest token and the guest's limitations.
struct GuestRoutes {
    let guests: GuestService

    func add(to router: RouterGroup<LatchkeyRequestContext>) {
        router.post("auth/guest") { request, _ in
            let deviceID = try request.requireDeviceID()
            return try jsonResponse(try await self.guests.start(deviceID: deviceID), status: .created)
        }
    }
}

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
