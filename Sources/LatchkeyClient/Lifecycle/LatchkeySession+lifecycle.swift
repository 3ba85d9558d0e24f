import Foundation

extension LatchkeySession {
    /// Tells the session what happened to the app; `followAppLifecycle()` (UIKit) or ``follow(_:)`` call it.
    ///
    /// - ``AppLifecycleEvent/willEnterForeground``: ``revalidate()``.
    /// - ``AppLifecycleEvent/protectedDataDidBecomeAvailable``: writes what a locked Keychain refused, and bootstraps
    ///   again when the state is ``AuthState/storeUnavailable(_:)``.
    public func handle(_ event: AppLifecycleEvent) async {
        switch event {
        case .willEnterForeground:
            await self.revalidate()
        case .protectedDataDidBecomeAvailable:
            if self.hasUnsavedCredentials { self.writeUnsavedCredentials() }
            if case .storeUnavailable = self.state { await self.bootstrap() }
        }
    }

    /// Handles each event of `events` until it finishes or the calling task is cancelled: for apps that observe their
    /// lifecycle themselves (AppKit, SwiftUI's `scenePhase`, a command-line app).
    public func follow(_ events: AsyncStream<AppLifecycleEvent>) async {
        for await event in events { await self.handle(event) }
    }

    /// Brings the session up to date after time in the background: follows what another process did to the stored
    /// session (an extension's sign-out ends it here, its refresh or sign-in is adopted), and refreshes a token that
    /// expires within the clock-skew buffer (a guest or access-code token that does is over: `.signedOut(reason: .sessionExpired)`).
    /// Before the first ``bootstrap()`` (or while the store was unavailable) it bootstraps. Errors (offline) change nothing.
    /// With a ``Configuration/tokenProvider``, a session that is not signed in (the provider or the server could not be
    /// reached at launch) asks the provider again.
    public func revalidate() async {
        guard self.credentials != nil, !self.isStoreUnavailable, self.state != .restoring else {
            await self.bootstrap()
            return
        }
        if self.configuration.tokenProvider != nil {
            if !self.state.isSignedIn { await self.readProvider() }
            return
        }
        self.followStoredSession()
        guard let session = self.credentials?.session, self.isExpiring(session) else { return }
        guard session.refreshToken != nil else {
            self.endSession(.signedOut(reason: .sessionExpired), reason: .sessionExpired)
            return
        }
        _ = try? await self.refreshSession(replacing: session.accessToken)
    }
}

extension LatchkeySession {
    /// Whether the state is ``AuthState/storeUnavailable(_:)``, whatever the problem.
    var isStoreUnavailable: Bool { if case .storeUnavailable = self.state { true } else { false } }
}
