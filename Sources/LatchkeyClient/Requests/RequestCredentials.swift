import Foundation
import LatchkeyAPI

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The credentials an auth policy puts on one request, and the session generation they belong to.
struct RequestCredentials: Sendable {
    /// The access token sent, when the policy sends one (what a 401 rejected).
    var token: String?
    /// Whether the token goes in the query as `?token=` instead of the `Authorization` header.
    var tokenInQuery = false
    /// The lowercase device UUID for `X-Device-ID`, when the policy sends it.
    var deviceID: String?
    /// Whether a caller's own `Authorization` header is removed (the device-ID rule means no JWT at all).
    var removesAuthorization = false
    /// The session generation the token belongs to.
    var generation: Int

    /// `request` with these credentials.
    func applied(to request: TransportRequest) -> TransportRequest {
        var request = request
        if self.removesAuthorization || self.token != nil {
            for name in request.headers.keys where name.caseInsensitiveCompare("Authorization") == .orderedSame { request.headers[name] = nil }
        }
        if let token = self.token {
            if self.tokenInQuery { request.url = Self.url(request.url, token: token) } else { request.headers["Authorization"] = "Bearer \(token)" }
        }
        if let deviceID = self.deviceID {
            for name in request.headers.keys where name.caseInsensitiveCompare(LatchkeyHeader.deviceID) == .orderedSame {
                request.headers[name] = nil
            }
            request.headers[LatchkeyHeader.deviceID] = deviceID
        }
        return request
    }

    /// `request` with these credentials.
    func applied(to request: URLRequest) -> URLRequest {
        var request = request
        if self.removesAuthorization || self.token != nil { request.setValue(nil, forHTTPHeaderField: "Authorization") }
        if let token = self.token {
            if self.tokenInQuery, let url = request.url {
                request.url = Self.url(url, token: token)
            } else {
                request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
            }
        }
        if let deviceID = self.deviceID { request.setValue(deviceID, forHTTPHeaderField: LatchkeyHeader.deviceID) }
        return request
    }

    private static func url(_ url: URL, token: String) -> URL {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return url }
        components.queryItems = (components.queryItems ?? []).filter { $0.name != "token" } + [URLQueryItem(name: "token", value: token)]
        return components.url ?? url
    }
}
