import Foundation
import LatchkeyAPI

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension LatchkeySession {
    /// Sends `request` to the Latchkey server with its auth policy and returns the 2xx response.
    ///
    /// A token policy meeting a 401 refreshes the session (single-flight) and retries once; a second 401 is
    /// ``LatchkeyError/rejected(_:)`` (status 401), and a request whose session ended meanwhile is not sent again
    /// (``LatchkeyError/notSignedIn``). A 429 with `Retry-After` of at most 5 seconds is waited for and retried once;
    /// otherwise it is ``LatchkeyError/rateLimited(_:)`` and a ``LatchkeyEvent/rateLimited(_:)`` event. No answer at all
    /// is ``LatchkeyError/offline(_:)``. For the app's own API (``Configuration/apiOrigins``), see ``data(for:policy:)``.
    public func send(_ request: LatchkeyRequest) async throws -> LatchkeyResponse {
        let prepared = TransportRequest(
            method: request.method, url: try self.url(for: request.path, queryItems: request.queryItems), headers: request.headers,
            body: request.body)
        let response = try await self.exchange(prepared, policy: request.auth) { attempt in
            request.provesDevice ? try await self.performProving(attempt) : try await self.perform(attempt)
        }
        return try self.check(response)
    }

    /// Sends `request` and decodes its JSON body as `type`.
    public func send<Response: Decodable>(_ request: LatchkeyRequest, decoding type: Response.Type) async throws -> Response {
        try await self.send(request).decode(type)
    }

    /// Sends `request` and decodes its JSON body as `type`; no error text keeps any of `secrets` (a password, a code, a
    /// token the request carried) or the session's tokens.
    func send<Response: Decodable>(_ request: LatchkeyRequest, decoding type: Response.Type, hiding secrets: [String?]) async throws -> Response {
        do {
            return try await self.send(request, decoding: type)
        } catch let error as LatchkeyError {
            throw error.redacting(secrets + [self.credentials?.session?.accessToken, self.credentials?.session?.refreshToken])
        }
    }

    /// The URL of `path` with the access token as `?token=` and a `ws`/`wss` scheme, for WebSocket endpoints.
    public func webSocketURL(path: String) async throws -> URL {
        let credentials = try await self.credentials(for: .tokenInQuery, replacing: nil)
        let url = credentials.applied(to: TransportRequest(method: "GET", url: try self.url(for: path))).url
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { throw LatchkeyError.invalidResponse }
        components.scheme = components.scheme == "https" ? "wss" : "ws"
        guard let url = components.url else { throw LatchkeyError.invalidResponse }
        return url
    }

    /// Sends without any auth handling; a transport failure is ``LatchkeyError/offline(_:)``. Keeps the DPoP nonce an answer
    /// of the Latchkey server carries (another host's `DPoP-Nonce` is not the server's to hand out).
    func perform(_ request: TransportRequest) async throws -> TransportResponse {
        do {
            let response = try await self.transport.send(request)
            if let nonce = response.header(DPoPProof.nonceHeader), HTTPOrigin(request.url) == self.serverOrigin { self.dpopNonce = nonce }
            return response
        } catch {
            throw Self.transportError(error)
        }
    }

    /// A transport's failure as the SDK reports it: cancellation stays cancellation, a `URLError` keeps its code (no answer,
    /// ``LatchkeyError/offline(_:)``, or a connection the platform refused, ``LatchkeyError/connectionRefused(_:)``).
    static func transportError(_ error: any Error) -> any Error {
        switch error {
        case is CancellationError: CancellationError()
        case let error as URLError where error.code == .cancelled: CancellationError()
        case let error as LatchkeyError: error
        case let error as URLError: LatchkeyError.transport(error)
        default: LatchkeyError.offline(.unknown)
        }
    }

    /// The response if it is 2xx, else its error (a 429 is also emitted as an event).
    func check(_ response: TransportResponse) throws -> LatchkeyResponse {
        let now = self.clock.now()
        if (200..<300).contains(response.status) {
            return LatchkeyResponse(
                status: response.status, headers: response.headers, body: response.body, rateLimit: RateLimitInfo(response: response, now: now))
        }
        let error = LatchkeyError.from(response, now: now)
        if case .rateLimited(let info) = error { self.emit(.rateLimited(info)) }
        throw error
    }
}
