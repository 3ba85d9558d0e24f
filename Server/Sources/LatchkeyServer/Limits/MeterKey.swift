import Crypto
import Foundation
import Hummingbird
import LatchkeyAPI

/// The meter key of a guest request: SHA-256(client IP + device ID), so a new guest token keeps the device's count.
///
/// The `X-Device-ID` header must name the device the guest token was issued to: otherwise a guest could escape
/// its meter by sending a new device ID with every request.
func meterKey(guest token: VerifiedToken, request: Request, context: LatchkeyRequestContext, trustedProxies: Set<String>) throws -> String {
    let deviceID = try request.requireDeviceID()
    guard deviceID == token.deviceID else {
        throw APIError(.forbidden, .forbidden, "The X-Device-ID header does not name the device of this guest token.")
    }
    let material = context.limitKey(of: request, trustedProxies: trustedProxies) + " " + deviceID
    return SHA256.hash(data: Data(material.utf8)).hexString
}
