import Foundation
import LatchkeyAPI

extension LatchkeySession {
    /// Refreshes the session now (normally the SDK does this by itself when a token is about to expire or is rejected).
    @discardableResult
    public func refresh() async throws -> AuthSession {
        guard self.configuration.tokenProvider == nil else { throw LatchkeyError.notSignedIn }
        guard let session = try self.loadCredentials().session else { throw LatchkeyError.notSignedIn }
        // Asked to refresh, a session without a refresh token (a valid access code or guest token) stays as it is;
        // only a rejected token without a way to refresh ends it (see refreshSession).
        guard session.refreshToken != nil else { throw LatchkeyError.rejected(.notRefreshable) }
        return AuthSession(try await self.refreshSession(replacing: session.accessToken))
    }

    /// The session that replaces the one whose access token is `token`: the current one if it was replaced already,
    /// the result of the refresh in flight, a newer one another process stored, or the result of one new refresh call.
    ///
    /// The refresh runs in a task of its own inside a background task (``BackgroundExecution``): a caller that is
    /// cancelled, or an app that is suspended, does not lose the answer the server committed. An answer that is lost
    /// anyway (no response) leaves the session as it was; the server answers the same refresh token again with the same
    /// successor until that successor is used.
    func refreshSession(replacing token: String) async throws -> StoredSession {
        guard let session = try self.loadCredentials().session else { throw LatchkeyError.notSignedIn }
        if session.accessToken != token { return session }
        if let inFlight = self.refreshInFlight, inFlight.generation == self.generation { return try await inFlight.task.value }
        if let newer = self.adoptNewerSession(replacing: token) { return newer }
        guard let refreshToken = session.refreshToken else {
            self.endSession(.signedOut(reason: .sessionExpired), reason: .sessionExpired)
            throw LatchkeyError.sessionExpired
        }
        let generation = self.generation
        let id = UUID()
        let background = self.backgroundExecution
        let task = Task {
            let end = await background?.beginTask(named: "Latchkey token refresh")
            do {
                let refreshed = try await self.completeRefresh(refreshToken, generation: generation)
                await end?()
                return refreshed
            } catch {
                await end?()
                throw error
            }
        }
        self.refreshInFlight = RefreshInFlight(generation: generation, id: id, task: task)
        defer { if self.refreshInFlight?.id == id { self.refreshInFlight = nil } }
        return try await task.value
    }

    /// Calls `/auth/refresh` once and applies the answer, unless the session ended (or another began) meanwhile.
    private func completeRefresh(_ refreshToken: String, generation: Int) async throws -> StoredSession {
        let response = try await self.requestRefresh(refreshToken)
        // Generation fencing: after signOut or a new sign-in, this answer belongs to a session that is gone.
        guard generation == self.generation else { throw LatchkeyError.notSignedIn }
        switch response.status {
        case 200..<300:
            guard let pair = try? JSONDecoder().decode(TokenPairResponse.self, from: response.body) else { throw LatchkeyError.invalidResponse }
            return try self.store(self.storedSession(from: pair), replacing: refreshToken)
        case 401:
            // Another process may have rotated the token and stored the result: that is not a sign-out.
            if let current = self.credentials?.session, let newer = self.adoptNewerSession(replacing: current.accessToken) { return newer }
            self.endSession(.signedOut(reason: .sessionExpired), reason: .sessionExpired)
            throw LatchkeyError.sessionExpired
        default:
            _ = try self.check(response)
            throw LatchkeyError.invalidResponse
        }
    }

    /// Writes the refreshed (or stepped-up) `session` over the one whose refresh token was `refreshToken`, only if the
    /// store still holds that one: another process that stored a newer session (its own refresh, a sign-out, the next
    /// user) keeps it, and this session follows it.
    func store(_ session: StoredSession, replacing refreshToken: String) throws -> StoredSession {
        let result = try self.commit(keepingOnFailure: true, expecting: { $0?.session?.refreshToken == refreshToken }) { $0.session = session }
        switch result {
        case .committed:
            self.emit(.tokenRefreshed(AuthSession(session)))
            self.setState(.signedIn(AuthSession(session)))
            return session
        case .conflict(let stored):
            if let stored, let theirs = stored.session, stored.deviceID == self.credentials?.deviceID {
                self.adopt(stored)
                return theirs
            }
            self.startNewGeneration()
            self.credentials?.session = nil
            self.emit(.signedOut(.signedOutElsewhere))
            self.setState(.signedOut(reason: .signedOutElsewhere))
            throw LatchkeyError.notSignedIn
        }
    }

    /// `POST /api/v1/auth/refresh` with a proof of the device key, sent straight to the transport: the refresh request
    /// is never itself refreshed or retried (only sent again once with the server's DPoP nonce when it asks for one).
    func requestRefresh(_ refreshToken: String) async throws -> TransportResponse {
        let request = TransportRequest(
            method: "POST", url: try self.url(for: "/api/v1/auth/refresh"), headers: ["Content-Type": "application/json"],
            body: try JSONEncoder().encode(RefreshRequest(refreshToken: refreshToken)))
        return try await self.performProving(request)
    }

    func storedSession(from pair: TokenPairResponse) -> StoredSession {
        StoredSession(
            kind: .session, userID: pair.userID, sessionID: pair.sessionID, accessToken: pair.accessToken,
            accessTokenExpiresAt: self.clock.now().addingTimeInterval(TimeInterval(pair.expiresIn)), refreshToken: pair.refreshToken)
    }
}
