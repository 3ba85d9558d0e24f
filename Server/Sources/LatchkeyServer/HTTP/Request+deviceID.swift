import Foundation
import HTTPTypes
import Hummingbird
import LatchkeyAPI

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
