import Foundation
import LatchkeyAPI

extension LatchkeySession {
    /// With an external token provider (seed 004): signed in when the provider has a token and the server accepts it.
    ///
    /// The user ID is the server's (`/auth/me`), never the provider's subject; it is remembered beside the device UUID
    /// for that provider subject, so a launch while offline or while the server fails keeps the previous state (the
    /// remembered user, when the provider's token names the same subject) instead of signing out. A provider that throws
    /// (its SDK offline) keeps the remembered user too. Without a remembered user to keep, the state is signed out: never
    /// ``AuthState/restoring``.
    func bootstrapWithProvider() async -> AuthState {
        await self.readProvider()
    }

    /// Follows the identity provider's changes (a sign-in, a sign-out, another account) until `changes` finishes or the
    /// calling task is cancelled: after each element the session asks the provider for its token again and the server
    /// whose it is, and updates its state. A provider that answers `nil` signs the session out
    /// (``SignOutReason/signedOutElsewhere``); another account's token is that user's session (a new ``AuthState``
    /// with its user ID); a provider or server that cannot be reached keeps the state, as ``bootstrap()`` does.
    ///
    /// With clerk-ios 1.x, yield an element for each of Clerk's auth events:
    ///
    /// ```swift
    /// let (changes, continuation) = AsyncStream<Void>.makeStream()
    /// Task { @MainActor in
    ///     for await _ in Clerk.shared.authEventEmitter.events { continuation.yield() }   // sign-in, sign-up, sign-out
    /// }
    /// await session.followProviderChanges(changes)
    /// ```
    ///
    /// Without a ``Configuration/tokenProvider`` this does nothing with the elements.
    public func followProviderChanges(_ changes: AsyncStream<Void>) async {
        for await _ in changes where self.configuration.tokenProvider != nil {
            await self.readProvider(endingWith: .signedOutElsewhere)
        }
    }

    /// Asks the provider for its token and the server whose it is, and moves to the resulting state. A session that was
    /// signed in and ends here ends with `reason`.
    @discardableResult
    func readProvider(endingWith reason: SignOutReason? = nil) async -> AuthState {
        var token: String?
        do {
            let current = try await self.providerToken(replacing: nil)
            token = current
            let profile = try await self.currentUser()
            self.defaults.set(ProviderUser(userID: profile.userID, token: current).stored, forKey: self.providerUserKey)
            self.setProviderState(.signedIn(AuthSession(userID: profile.userID, kind: .external, expiresAt: nil)), reason: reason)
        } catch let error as LatchkeyError where error.refusesSession {
            self.defaults.set(nil, forKey: self.providerUserKey)
            self.setProviderState(.signedOut(), reason: reason)
        } catch {
            // Offline, a failing server or provider: keep what was known.
            self.setProviderState(self.rememberedProviderState(token: token), reason: reason)
        }
        return self.state
    }

    /// The state to keep when the provider or the server cannot answer: the remembered user, when the provider's token
    /// (if it gave one) names the subject it was remembered for; otherwise signed out.
    private func rememberedProviderState(token: String?) -> AuthState {
        guard let remembered = self.defaults.string(forKey: self.providerUserKey).flatMap(ProviderUser.init(stored:)),
            token.map({ remembered.subject == ProviderUser.subject(of: $0) }) ?? true
        else { return .signedOut() }
        return .signedIn(AuthSession(userID: remembered.userID, kind: .external, expiresAt: nil))
    }

    /// Moves to `state`; when it is another user's or none, requests prepared for the previous user are not sent again
    /// (a new generation), and a session that ends says so with `reason`.
    private func setProviderState(_ state: AuthState, reason: SignOutReason?) {
        guard case .signedIn(let previous) = self.state else { return self.setState(state) }
        if case .signedIn(let next) = state, next.userID == previous.userID { return self.setState(state) }
        self.startNewGeneration()
        if state.isSignedIn {
            self.setState(state)
        } else {
            if let reason { self.emit(.signedOut(reason)) }
            self.setState(.signedOut(reason: reason))
        }
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
