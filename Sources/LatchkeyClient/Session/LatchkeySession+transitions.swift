import Foundation

extension LatchkeySession {
    /// Starts `session` as the current one: later refreshes of an older session cannot overwrite it, and requests sent
    /// under the older one are not sent again with it. What the server issued is kept even when the store cannot be
    /// written (see ``commit(keepingOnFailure:expecting:_:)``).
    func begin(_ session: StoredSession, deviceSecret: String? = nil, registeredDevice: Bool = false) throws -> AuthSession {
        _ = try self.loadCredentials()
        self.startNewGeneration()
        try self.commit(keepingOnFailure: true) { credentials in
            credentials.session = session
            if let deviceSecret { credentials.deviceSecret = deviceSecret }
            if registeredDevice { credentials.deviceIDRestored = false }
        }
        self.setState(.signedIn(AuthSession(session)))
        return AuthSession(session)
    }

    /// Ends the current session here (the device identity stays) and moves to `state`. The stored session is cleared
    /// only when it is still this one: another process's next sign-in stays.
    func endSession(_ state: AuthState, reason: SignOutReason) {
        self.startNewGeneration()
        let ours = self.credentials?.session
        if let ours {
            _ = try? self.commit(keepingOnFailure: true, expecting: { Self.isSameSession($0?.session, as: ours) }) { $0.session = nil }
            self.credentials?.session = nil
            self.emit(.signedOut(reason))
        }
        self.setState(state)
    }

    /// Uses the session another process stored. When it belongs to another user (or another device identity), requests
    /// prepared for this one are not sent again with it (a new generation).
    func adopt(_ stored: StoredCredentials) {
        guard let theirs = stored.session else { return }
        if theirs.userID != self.credentials?.session?.userID || stored.deviceID != self.credentials?.deviceID {
            self.startNewGeneration()
        }
        self.credentials = stored
        self.hasUnsavedCredentials = false
        self.emit(.sessionAdopted(AuthSession(theirs)))
        self.setState(.signedIn(AuthSession(theirs)))
    }

    /// The session in the secure store when another process (an app extension, a second CLI run) replaced ours there
    /// with newer tokens of the same user; adopted.
    func adoptNewerSession(replacing token: String) -> StoredSession? {
        guard let current = self.credentials, let ours = current.session,
            let stored = try? self.secureStore.load(), let theirs = stored.session,
            stored.deviceID == current.deviceID, theirs.userID == ours.userID, theirs.accessToken != token
        else { return nil }
        self.adopt(stored)
        return theirs
    }

    /// Follows what another process did to the stored session while this one was not looking (in the background, or
    /// before its ``StoreChangeNotifier`` posted): its sign-out ends ours here, its refresh or sign-in is adopted, and a
    /// new device identity it started (``resetDeviceIdentity()``, ``deleteAccount()``) becomes this session's too. A store
    /// that cannot be read, or a write of ours still pending, changes nothing.
    func followStoredSession() {
        guard let current = self.credentials, !self.hasUnsavedCredentials, let stored = try? self.secureStore.load() else { return }
        let newIdentity = stored.deviceID != current.deviceID
        guard newIdentity || stored.session != current.session else { return }
        if newIdentity { self.defaults.set(stored.deviceID.uuidString, forKey: self.configuration.deviceIDDefaultsKey) }
        guard stored.session != nil else {
            self.startNewGeneration()
            if newIdentity { self.credentials = stored } else { self.credentials?.session = nil }
            if current.session != nil { self.emit(.signedOut(.signedOutElsewhere)) }
            self.setState(.signedOut(reason: current.session != nil ? .signedOutElsewhere : nil))
            return
        }
        self.adopt(stored)
    }
}
