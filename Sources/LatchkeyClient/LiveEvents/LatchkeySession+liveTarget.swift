import Foundation
import LatchkeyAPI

/// Where one connection of the live event stream goes, with which access token, for which session generation.
struct LiveEventsTarget: Sendable {
    var request: TransportRequest
    var token: String
    var generation: Int
}

extension LatchkeySession {
    /// The upgrade request for `GET /api/v1/events` (`ws`/`wss` from the server URL's `http`/`https`) with the access
    /// token in `Authorization` (never in the URL, where logs keep it); with `rejected`, a token other than that one.
    func liveEventsTarget(replacing rejected: String?) async throws -> LiveEventsTarget {
        let credentials = try await self.credentials(for: .bearer, replacing: rejected)
        guard let token = credentials.token, var components = URLComponents(url: try self.url(for: "/api/v1/events"), resolvingAgainstBaseURL: false)
        else { throw LatchkeyError.notSignedIn }
        components.scheme = components.scheme == "https" ? "wss" : "ws"
        guard let url = components.url else { throw LatchkeyError.invalidResponse }
        let request = credentials.applied(to: TransportRequest(method: "GET", url: url))
        return LiveEventsTarget(request: request, token: token, generation: credentials.generation)
    }

    /// Whether the session of `generation` is still the one in use.
    func isCurrent(_ generation: Int) -> Bool { generation == self.generation }

    /// The stored access token of the session of `generation`, when it is still in use (after a refresh, the new one).
    func accessToken(of generation: Int) -> String? {
        guard generation == self.generation, self.configuration.tokenProvider == nil else { return nil }
        return self.credentials?.session?.accessToken
    }

    /// A token to go on with before `token` expires: the session's newer one, a refreshed one, or the provider's fresh
    /// one. `nil` when there is none to be had ahead of time (no refresh token: the token's expiry ends the session as
    /// it does for requests) or the refresh failed (the usual rules apply: a rejected refresh token ends the session).
    func tokenReplacing(expiring token: String, generation: Int) async -> String? {
        guard generation == self.generation else { return nil }
        if self.configuration.tokenProvider != nil { return try? await self.providerToken(replacing: token) }
        guard let session = self.credentials?.session, session.refreshToken != nil else { return nil }
        return try? await self.refreshSession(replacing: token).accessToken
    }

    /// Ends the session of `generation` after the server revoked it, unless another one began meanwhile.
    func endRevokedSession(generation: Int) {
        guard generation == self.generation else { return }
        self.endSession(.signedOut(reason: .revoked), reason: .revoked)
    }
}
