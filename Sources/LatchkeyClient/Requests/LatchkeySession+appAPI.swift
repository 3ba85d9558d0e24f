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
    /// For an HTTP stack of the app's own; prefer ``data(for:policy:)``, which also retries once after a 401 and sends the
    /// token only to ``Configuration/apiOrigins``: this returns the token to whoever asks.
    public func accessToken() async throws -> String {
        try await self.bearer(replacing: nil)
    }

    /// Puts `policy`'s credentials on an app's own request (for an HTTP stack of the app's own, or a WebSocket to the app's
    /// API with ``AuthPolicy/tokenInQuery``): the bearer (fresh, as ``accessToken()``), `X-Device-ID`, or the token as
    /// `?token=`. ``AuthPolicy/deviceID`` removes any `Authorization` header. After a 401 with it, call ``refresh()`` and
    /// authorize again. A `ws`/`wss` URL has the origin of its `http`/`https` twin.
    ///
    /// - Throws: ``LatchkeyError/invalidRequest(_:)`` when `policy` is not ``AuthPolicy/none`` and the request's URL is
    ///   not on the Latchkey server or one of ``Configuration/apiOrigins`` (or is plain `http` to a host that is not a
    ///   loopback one); the request is left as it was.
    public func authorize(_ request: inout URLRequest, policy: AuthPolicy) async throws {
        guard let url = request.url else {
            if policy == .none { return }
            throw LatchkeyError.invalidRequest("the request needs an absolute URL")
        }
        try self.checkDestination(url, policy: policy)
        request = try await self.credentials(for: policy, replacing: nil).applied(to: request)
    }

    /// Sends an app's own request with `policy`'s credentials and returns its body and response, whatever its status (the
    /// app's API has errors of its own), as `URLSession.data(for:)` does.
    ///
    /// The policy is the call site's to say: ``AuthPolicy/bearer`` for the app's API, ``AuthPolicy/deviceID`` for
    /// endpoints that know the device only, ``AuthPolicy/none`` for anything else (a CDN, a third party). Credentials go
    /// only to the Latchkey server and ``Configuration/apiOrigins``; anywhere else, or over plain `http` to a host that is
    /// not a loopback one, the call throws ``LatchkeyError/invalidRequest(_:)`` and sends nothing.
    ///
    /// The same rules as ``send(_:)``: a 401 to a request that carried a token refreshes the session (single-flight,
    /// shared with every other request) and sends it once more, never with the next session's token — from the Latchkey
    /// server always, from the app's API only when the 401 says the token is the problem
    /// (`WWW-Authenticate: Bearer error="invalid_token"`, RFC 6750) or the token sent was already within
    /// ``Configuration/clockSkew`` of its expiry; any other 401 is handed back as it is, and the session is kept. A 429
    /// with a `Retry-After` of at most 5 seconds is waited for and sent once more (`RateLimitInfo(response:)` reads the
    /// headers of one handed back). No answer at all is ``LatchkeyError/offline(_:)``; a session that cannot be
    /// refreshed is ``LatchkeyError/sessionExpired``. The request's method, URL (absolute, `http` or `https`), headers and
    /// `httpBody` are sent; redirects are not followed.
    public func data(for request: URLRequest, policy: AuthPolicy) async throws -> (Data, HTTPURLResponse) {
        let prepared = try self.transportRequest(request, policy: policy)
        let response = try await self.exchange(prepared, policy: policy) { try await self.perform($0) }
        self.noteRateLimit(response.status, response.header)
        return (response.body, try Self.httpResponse(prepared.url, status: response.status, headers: response.headers))
    }

    /// ``data(for:policy:)`` for a streamed body (Stori's `POST /api/v1/compose/stream`): returns once the response head
    /// arrived, with the body as it arrives (``ResponseBytes/lines`` for server-sent events). The same rules on where
    /// credentials may go. The request is cancelled when the body's reader goes away before its end (a `break`, or a
    /// ``ResponseBytes`` dropped unread), and a reader that falls too far behind ends it (see ``ResponseBytes``).
    public func bytes(for request: URLRequest, policy: AuthPolicy) async throws -> (ResponseBytes, HTTPURLResponse) {
        let prepared = try self.transportRequest(request, policy: policy)
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

    /// `request` as the transport sends it, once its URL is known to be one `policy` may send credentials to.
    private func transportRequest(_ request: URLRequest, policy: AuthPolicy) throws -> TransportRequest {
        guard let url = request.url, ["http", "https"].contains(url.scheme?.lowercased()), url.host != nil else {
            throw LatchkeyError.invalidRequest("the request needs an absolute http or https URL")
        }
        try self.checkDestination(url, policy: policy)
        return TransportRequest(method: request.httpMethod ?? "GET", url: url, headers: request.allHTTPHeaderFields ?? [:], body: request.httpBody)
    }

    /// Throws ``LatchkeyError/invalidRequest(_:)`` unless `url` is absolute (`http`, `https`, or for ``authorize(_:policy:)``
    /// `ws` and `wss`) and, for a policy that sends credentials, on the Latchkey server or one of the API origins, over
    /// `https` (`wss`) or to a loopback host.
    ///
    /// The server's own origin may be plain `http` anywhere: every refresh token goes there already.
    private func checkDestination(_ url: URL, policy: AuthPolicy) throws {
        guard policy != .none else { return }
        guard let origin = HTTPOrigin(url) else { throw LatchkeyError.invalidRequest("the request needs an absolute http, https, ws or wss URL") }
        guard origin != self.serverOrigin else { return }
        guard self.apiOrigins.contains(origin) else {
            throw LatchkeyError.invalidRequest(
                "\(origin) is neither the Latchkey server nor one of Configuration.apiOrigins, and the .\(policy.rawValue) policy sends credentials; "
                    + "list the origin there, or send the request with .none")
        }
        guard origin.isSecureForCredentials else {
            throw LatchkeyError.invalidRequest(
                "\(origin) is plain http, and the .\(policy.rawValue) policy sends credentials, which go over http only to loopback hosts "
                    + "(localhost, 127.0.0.0/8, ::1); use https")
        }
    }

    private static func httpResponse(_ url: URL, status: Int, headers: [String: String]) throws -> HTTPURLResponse {
        guard let response = HTTPURLResponse(url: url, statusCode: status, httpVersion: "HTTP/1.1", headerFields: headers) else {
            throw LatchkeyError.invalidResponse
        }
        return response
    }
}
