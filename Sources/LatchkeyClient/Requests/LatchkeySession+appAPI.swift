import Foundation
import LatchkeyAPI

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension LatchkeySession {
    /// This install's device UUID as mirrored in the defaults store, read without touching the Keychain (seed 000's asset
    /// requests carry `X-Device-ID` precisely so that they need no Keychain read); `nil` before the first launch made it.
    public nonisolated var mirroredDeviceID: UUID? {
        self.defaults.string(forKey: self.configuration.deviceIDDefaultsKey).flatMap(UUID.init(uuidString:))
    }

    /// A bearer for the app's own API: the current access token, refreshed first (single-flight) when it expires within
    /// ``Configuration/clockSkew``; with a ``Configuration/tokenProvider``, the provider's token.
    ///
    /// For an HTTP stack of the app's own; prefer ``data(for:policy:)``, which also retries once after a 401.
    public func accessToken() async throws -> String {
        try await self.bearer(replacing: nil)
    }

    /// Puts `policy`'s credentials on an app's own request to any host (for an HTTP stack of the app's own): the
    /// bearer (fresh, as ``accessToken()``), `X-Device-ID`, or the token as `?token=`. ``AuthPolicy/deviceID`` removes any
    /// `Authorization` header. After a 401 with it, call ``refresh()`` and authorize again.
    public func authorize(_ request: inout URLRequest, policy: AuthPolicy = .bearer) async throws {
        request = try await self.credentials(for: policy, replacing: nil).applied(to: request)
    }

    /// Sends an app's own request to any host with `policy`'s credentials and returns its body and response, whatever
    /// its status (the app's API has errors of its own), as `URLSession.data(for:)` does.
    ///
    /// The same rules as ``send(_:)``: a 401 to a request that carried a token refreshes the session (single-flight,
    /// shared with every other request) and sends it once more, never with the next session's token; a 429 with a
    /// `Retry-After` of at most 5 seconds is waited for and sent once more. No answer at all is ``LatchkeyError/offline``;
    /// a session that cannot be refreshed is ``LatchkeyError/sessionExpired``. The request's method, URL (absolute,
    /// `http` or `https`), headers and `httpBody` are sent; redirects are not followed.
    public func data(for request: URLRequest, policy: AuthPolicy = .bearer) async throws -> (Data, HTTPURLResponse) {
        let prepared = try Self.transportRequest(request)
        let response = try await self.exchange(prepared, policy: policy) { try await self.perform($0) }
        self.noteRateLimit(response.status, response.header)
        return (response.body, try Self.httpResponse(prepared.url, status: response.status, headers: response.headers))
    }

    /// ``data(for:policy:)`` for a streamed body (Stori's `POST /api/v1/compose/stream`): returns once the response head
    /// arrived, with the body as it arrives (``ResponseBytes/lines`` for server-sent events).
    public func bytes(for request: URLRequest, policy: AuthPolicy = .bearer) async throws -> (ResponseBytes, HTTPURLResponse) {
        let prepared = try Self.transportRequest(request)
        let stream = try await self.exchange(prepared, policy: policy) { attempt in
            do { return try await self.transport.stream(attempt) } catch { throw Self.transportError(error) }
        }
        self.noteRateLimit(stream.status, stream.header)
        return (ResponseBytes(stream), try Self.httpResponse(prepared.url, status: stream.status, headers: stream.headers))
    }

    private func noteRateLimit(_ status: Int, _ header: (String) -> String?) {
        guard status == 429 else { return }
        self.emit(.rateLimited(RateLimitInfo(header: header, now: self.clock.now()) ?? RateLimitInfo()))
    }

    private static func transportRequest(_ request: URLRequest) throws -> TransportRequest {
        guard let url = request.url, let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https", url.host != nil else {
            throw LatchkeyError.invalidRequest("the request needs an absolute http or https URL")
        }
        return TransportRequest(method: request.httpMethod ?? "GET", url: url, headers: request.allHTTPHeaderFields ?? [:], body: request.httpBody)
    }

    private static func httpResponse(_ url: URL, status: Int, headers: [String: String]) throws -> HTTPURLResponse {
        guard let response = HTTPURLResponse(url: url, statusCode: status, httpVersion: "HTTP/1.1", headerFields: headers) else {
            throw LatchkeyError.invalidResponse
        }
        return response
    }
}
