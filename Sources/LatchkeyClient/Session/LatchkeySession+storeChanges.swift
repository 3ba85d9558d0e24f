import Foundation

extension LatchkeySession {
    /// The notifier a session uses when its configuration names none: on Apple platforms a `DarwinStoreChangeNotifier`
    /// for a ``KeychainStore`` with an access group (a store an app shares with its extensions); otherwise none.
    static func defaultStoreChangeNotifier(for secureStore: any SecureStore) -> (any StoreChangeNotifier)? {
        #if canImport(Darwin)
        guard let keychain = secureStore as? KeychainStore, keychain.location.accessGroup != nil else { return nil }
        return DarwinStoreChangeNotifier(for: keychain)
        #else
        return nil
        #endif
    }

    /// Starts following the notifier's posts, once: each makes the session read the store and take what another
    /// process wrote there. The listening task holds the session weakly and ends with it.
    func followStoreChanges() {
        guard let notifier = self.storeChangeNotifier, self.storeChangeListener == nil else { return }
        let changes = notifier.changes()
        self.storeChangeListener = Task { [weak self] in
            for await _ in changes {
                guard let self else { return }
                await self.storeDidChange()
            }
        }
    }

    /// Another process (or another session of this one) wrote to the store: a sign-out there ends the session here, a
    /// refresh or another user's sign-in there is adopted (see `followStoredSession()`). Sessions with a token provider
    /// store no session.
    func storeDidChange() {
        guard self.configuration.tokenProvider == nil else { return }
        self.followStoredSession()
    }

    /// Tells the other processes sharing the store that this session wrote to it.
    func announceStoreChange() {
        self.storeChangeNotifier?.post()
    }
}
