import Foundation
import LatchkeyAPI

extension LatchkeySession {
    /// With an external token provider (seed 004): signed in when the provider has a token and the server accepts it.
    ///
    /// The user ID is the server's (`/auth/me`), never the provider's subject; it is remembered beside the device UUID
    /// for that provider subject, so a launch while offline or while the server fails keeps the previous state (the
    /// remembered user, when the provider's token names the same subject) instead of signing out.
    func bootstrapWithProvider() async -> AuthState {
        var token: String?
        do {
            let current = try await self.providerToken(replacing: nil)
            token = current
            let profile = try await self.currentUser()
            self.defaults.set(ProviderUser(userID: profile.userID, token: current).stored, forKey: self.providerUserKey)
            self.setState(.signedIn(AuthSession(userID: profile.userID, kind: .external, expiresAt: nil)))
        } catch let error as LatchkeyError where error == .notSignedIn || error == .sessionExpired || error.details?.status == 401 {
            self.defaults.set(nil, forKey: self.providerUserKey)
            self.setState(.signedOut())
        } catch {
            // Offline, a failing server or provider: keep what was known.
            guard !self.state.isSignedIn, let token,
                let remembered = self.defaults.string(forKey: self.providerUserKey).flatMap(ProviderUser.init(stored:)),
                remembered.subject == ProviderUser.subject(of: token)
            else { return self.state }
            self.setState(.signedIn(AuthSession(userID: remembered.userID, kind: .external, expiresAt: nil)))
        }
        return self.state
    }

    private var providerUserKey: String { self.configuration.deviceIDDefaultsKey + ".provider-user" }

    /// The provider's token; with `rejected`, a fresh one from one forced call shared by every request the server
    /// refused that token for.
    func providerToken(replacing rejected: String?) async throws -> String {
        guard let provider = self.configuration.tokenProvider else { throw LatchkeyError.notSignedIn }
        let token: String?
        if let rejected {
            let task: Task<String?, any Error>
            if let inFlight = self.providerRefresh, inFlight.rejected == rejected {
                task = inFlight.task
            } else {
                task = Task { try await provider(true) }
                self.providerRefresh = (rejected, task)
            }
            token = try await task.value
        } else {
            token = try await provider(false)
        }
        guard let token else { throw LatchkeyError.notSignedIn }
        return token
    }
}

/// The server's user ID for a provider's subject, as remembered in the defaults store: `<subject hash> <user ID>`.
struct ProviderUser {
    /// A SHA-256 of the token's issuer and subject (hex), so the defaults store names no provider account.
    var subject: String
    var userID: String

    init(userID: String, token: String) {
        self.subject = Self.subject(of: token)
        self.userID = userID
    }

    init?(stored: String) {
        let parts = stored.split(separator: " ", maxSplits: 1).map(String.init)
        guard parts.count == 2 else { return nil }
        self.subject = parts[0]
        self.userID = parts[1]
    }

    var stored: String { self.subject + " " + self.userID }

    static func subject(of token: String) -> String {
        let claims = UnverifiedJWT.claims(of: token)
        let name = "\(claims?["iss"] as? String ?? "")\n\(claims?["sub"] as? String ?? "")"
        return SHA256Hex.digest(name)
    }
}
