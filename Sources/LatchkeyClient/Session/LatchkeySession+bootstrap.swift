import Foundation
import LatchkeyAPI

extension LatchkeySession {
    /// Restores the session at launch and returns the resulting state.
    ///
    /// Restore from the secure store → if the access token expires within ``Configuration/clockSkew``, refresh it
    /// (a token without refresh is dropped: signed out) → `GET /auth/me` → on 401 refresh and retry once → otherwise
    /// signed out. When the server cannot be reached or fails (5xx), a restored session stays signed in (requests fail as
    /// offline). A locked Keychain, or stored bytes that cannot be read (kept as they are), give
    /// ``AuthState/storeUnavailable(_:)`` (``StoreProblem/locked`` or ``StoreProblem/unreadable``): call again later (``handle(_:)`` does when protected data becomes available).
    @discardableResult
    public func bootstrap() async -> AuthState {
        let credentials: StoredCredentials
        do { credentials = try self.loadCredentials() } catch {
            self.setState(.storeUnavailable(Self.storeProblem(of: error)))
            return self.state
        }
        if self.configuration.tokenProvider != nil { return await self.bootstrapWithProvider() }
        guard var session = credentials.session else {
            self.setState(.signedOut())
            return self.state
        }
        if self.isExpiring(session) {
            guard session.refreshToken != nil else {
                self.endSession(.signedOut(reason: .sessionExpired), reason: .sessionExpired)
                return self.state
            }
            do { session = try await self.refreshSession(replacing: session.accessToken) } catch {
                return self.settle(after: error)
            }
        }
        do {
            _ = try await self.currentUser()
            if let current = self.credentials?.session { self.setState(.signedIn(AuthSession(current))) }
        } catch {
            return self.settle(after: error)
        }
        return self.state
    }

    /// The state after a failed bootstrap step: offline or a failing server keeps the session, a rejection ends it.
    private func settle(after error: any Error) -> AuthState {
        switch error {
        case let error as LatchkeyError where error.refusesSession:
            self.endSession(.signedOut(reason: .sessionExpired), reason: .sessionExpired)
        default:
            if let current = self.credentials?.session {
                self.setState(.signedIn(AuthSession(current)))
            } else {
                self.endSession(.signedOut(reason: .sessionExpired), reason: .sessionExpired)
            }
        }
        return self.state
    }

    /// The store problem `error` stands for (a store that threw something else has ``StoreProblem/failed(_:)``).
    static func storeProblem(of error: any Error) -> StoreProblem {
        switch error {
        case LatchkeyError.storeUnavailable(let problem): problem
        case let error as SecureStoreError: error.problem
        default: .failed(String(describing: type(of: error)))
        }
    }
}
