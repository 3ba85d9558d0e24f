import Foundation
import LatchkeyAPI

extension LatchkeySession {
    /// Restores the session at launch and returns the resulting state.
    ///
    /// Restore from the secure store → if the access token expires within ``Configuration/clockSkew``, refresh it
    /// (a token without refresh is dropped: signed out) → `GET /auth/me` → on 401 refresh and retry once → otherwise
    /// signed out. When the server cannot be reached, a restored session stays signed in (requests fail as offline).
    /// A locked Keychain gives ``AuthState/storeUnavailable``: call again later.
    @discardableResult
    public func bootstrap() async -> AuthState {
        let credentials: StoredCredentials
        do { credentials = try self.loadCredentials() } catch {
            self.setState(.storeUnavailable)
            return self.state
        }
        if self.configuration.tokenProvider != nil { return await self.bootstrapWithProvider() }
        guard var session = credentials.session else {
            self.setState(.signedOut)
            return self.state
        }
        if self.isExpiring(session) {
            guard session.refreshToken != nil else {
                self.endSession(.signedOut)
                return self.state
            }
            do { session = try await self.refreshSession(replacing: session.accessToken) } catch {
                return self.settle(after: error, keeping: session)
            }
        }
        do {
            _ = try await self.currentUser()
            if let current = self.credentials?.session { self.setState(.signedIn(AuthSession(current))) }
        } catch {
            return self.settle(after: error, keeping: session)
        }
        return self.state
    }

    /// The state after a failed bootstrap step: offline or a failing server keeps the session, a rejection ends it.
    private func settle(after error: any Error, keeping session: StoredSession) -> AuthState {
        switch error {
        case LatchkeyError.sessionExpired: self.endSession(.sessionExpired)
        case LatchkeyError.notSignedIn, LatchkeyError.unauthorized: self.endSession(.signedOut)
        default:
            if let current = self.credentials?.session { self.setState(.signedIn(AuthSession(current))) } else { self.endSession(.signedOut) }
        }
        return self.state
    }

    /// With an external token provider: signed in when the provider has a token and the server accepts it.
    private func bootstrapWithProvider() async -> AuthState {
        do {
            let profile = try await self.currentUser()
            self.setState(.signedIn(AuthSession(userID: profile.userID, kind: .external, expiresAt: nil)))
        } catch LatchkeyError.offline {
            let subject = (try? await self.accessToken(forceProviderRefresh: false)).flatMap(UnverifiedJWT.subject(of:))
            self.setState(subject.map { .signedIn(AuthSession(userID: $0, kind: .external, expiresAt: nil)) } ?? .signedOut)
        } catch {
            self.setState(.signedOut)
        }
        return self.state
    }
}
