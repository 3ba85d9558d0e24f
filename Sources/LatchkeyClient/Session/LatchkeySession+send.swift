import Foundation
import LatchkeyAPI

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension LatchkeySession {
    /// Sends `request` with its auth policy and returns the 2xx response.
    ///
    /// A token policy meeting a 401 refreshes the session (single-flight) and retries once; a second 401 is
    /// ``LatchkeyError/unauthorized(code:message:)``. A 429 is ``LatchkeyError/rateLimited(_:)`` and a
    /// ``LatchkeyEvent/rateLimited(_:)`` event; no answer at all is ``LatchkeyError/offline``.
    public func send(_ request: LatchkeyRequest) async throws -> LatchkeyResponse {
        var prepared = try await self.prepare(request, forceProviderRefresh: false)
        let perform = { (prepared: TransportRequest) in
            request.provesDevice ? try await self.performProving(prepared) : try await self.perform(prepared)
        }
        var response = try await perform(prepared.request)
        if response.status == 401, request.auth.usesToken, let rejected = prepared.token {
            try await self.recover(fromRejected: rejected)
            prepared = try await self.prepare(request, forceProviderRefresh: true)
            response = try await perform(prepared.request)
        }
        return try self.check(response)
    }

    /// Sends `request` and decodes its JSON body as `type`.
    public func send<Response: Decodable>(_ request: LatchkeyRequest, decoding type: Response.Type) async throws -> Response {
        try await self.send(request).decode(type)
    }

    /// The URL of `path` with the access token as `?token=` and a `ws`/`wss` scheme, for WebSocket endpoints.
    public func webSocketURL(path: String) async throws -> URL {
        let prepared = try await self.prepare(LatchkeyRequest(method: "GET", path: path, auth: .tokenInQuery), forceProviderRefresh: false)
        guard var components = URLComponents(url: prepared.request.url, resolvingAgainstBaseURL: false) else { throw LatchkeyError.invalidResponse }
        components.scheme = components.scheme == "https" ? "wss" : "ws"
        guard let url = components.url else { throw LatchkeyError.invalidResponse }
        return url
    }

    /// The transport request for `request`, and the token it carries.
    func prepare(_ request: LatchkeyRequest, forceProviderRefresh: Bool) async throws -> (request: TransportRequest, token: String?) {
        var headers = request.headers
        var queryItems = request.queryItems
        var token: String?
        if request.auth.usesToken {
            let accessToken = try await self.accessToken(forceProviderRefresh: forceProviderRefresh)
            token = accessToken
            if request.auth == .tokenInQuery {
                queryItems.append(URLQueryItem(name: "token", value: accessToken))
            } else {
                headers["Authorization"] = "Bearer \(accessToken)"
            }
        } else {
            // The device-ID rule (and `none`) means no JWT at all, even if the caller added one by mistake.
            for name in headers.keys where name.caseInsensitiveCompare("Authorization") == .orderedSame && request.auth == .deviceID {
                headers[name] = nil
            }
        }
        if request.auth.usesDeviceID { headers[LatchkeyHeader.deviceID] = try self.deviceID().uuidString.lowercased() }
        let url = try self.url(for: request.path, queryItems: queryItems)
        return (TransportRequest(method: request.method, url: url, headers: headers, body: request.body), token)
    }

    /// A bearer for the next request: the provider's, or the stored one (refreshed first when it is about to expire).
    func accessToken(forceProviderRefresh: Bool) async throws -> String {
        if let provider = self.configuration.tokenProvider {
            guard let token = try await provider(forceProviderRefresh) else { throw LatchkeyError.notSignedIn }
            return token
        }
        guard let session = try self.loadCredentials().session else { throw LatchkeyError.notSignedIn }
        guard self.isExpiring(session) else { return session.accessToken }
        guard session.refreshToken != nil else {
            self.endSession(.sessionExpired)
            throw LatchkeyError.sessionExpired
        }
        return try await self.refreshSession(replacing: session.accessToken).accessToken
    }

    /// After the server rejected `token`: make sure the next attempt uses another one, or end the session.
    func recover(fromRejected token: String) async throws {
        guard self.configuration.tokenProvider == nil else { return }  // the retry asks the provider for a fresh token
        guard let session = try self.loadCredentials().session else { throw LatchkeyError.notSignedIn }
        guard session.accessToken == token else { return }  // already replaced while this request was in flight
        guard session.refreshToken != nil else {
            if self.adoptNewerSession(replacing: token) != nil { return }
            self.endSession(.sessionExpired)
            throw LatchkeyError.sessionExpired
        }
        _ = try await self.refreshSession(replacing: token)
    }

    /// Sends without any auth handling; a transport failure is ``LatchkeyError/offline``. Keeps the DPoP nonce the
    /// answer carries.
    func perform(_ request: TransportRequest) async throws -> TransportResponse {
        do {
            let response = try await self.transport.send(request)
            if let nonce = response.header(DPoPProof.nonceHeader) { self.dpopNonce = nonce }
            return response
        } catch is CancellationError {
            throw CancellationError()
        } catch let error as URLError where error.code == .cancelled {
            throw CancellationError()
        } catch {
            throw LatchkeyError.offline
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
