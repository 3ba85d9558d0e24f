import Foundation

extension LatchkeySession {
    /// The credentials, resolving the device identity on first use. Writes again what an earlier write could not.
    func loadCredentials() throws -> StoredCredentials {
        if let credentials = self.credentials {
            if self.hasUnsavedCredentials { self.writeUnsavedCredentials() }
            return credentials
        }
        do {
            let credentials = try DeviceIdentity(
                secureStore: self.secureStore, defaults: self.defaults, defaultsKey: self.configuration.deviceIDDefaultsKey,
                reinstallPolicy: self.configuration.reinstallPolicy, isAppExtension: self.configuration.isAppExtension
            ).resolve()
            self.credentials = credentials
            self.followStoreChanges()
            return credentials
        } catch let error as SecureStoreError {
            throw error.latchkeyError
        }
    }

    /// What ``commit(keepingOnFailure:expecting:_:)`` did.
    enum CommitResult {
        /// The change was applied; these credentials are current (and stored, unless the write failed and was kept).
        case committed(StoredCredentials)
        /// The store did not hold what was expected (another process changed it); nothing was written. What it holds.
        case conflict(StoredCredentials?)
    }

    /// Compare-and-swap on the secure store: re-reads it and, when `expected` accepts what it holds, applies `change` to
    /// it and writes the result, as one step where the store allows (``SecureStore/update(_:)``). The change is applied
    /// to what the store holds (so another process's newer tokens or key survive a change that does not touch them), or to
    /// this session's credentials when the store holds another device or an earlier write of ours is still pending; this
    /// session keeps its own credentials with the change applied.
    ///
    /// With `keepingOnFailure` (what the server just issued: a new session, a device secret), a store that cannot be
    /// read or written keeps the change in memory, reports ``LatchkeyEvent/storeUnavailable(_:)`` and writes it at the next
    /// use; otherwise the failure is thrown.
    @discardableResult
    func commit(
        keepingOnFailure: Bool, expecting expected: (StoredCredentials?) -> Bool = { _ in true }, _ change: (inout StoredCredentials) -> Void
    ) throws -> CommitResult {
        let base = try self.loadCredentials()
        let pending = self.hasUnsavedCredentials
        var conflict: StoredCredentials??
        var failed = false
        do {
            try self.secureStore.update { stored in
                // While an earlier write of ours is pending, the store is behind because of us, not another process.
                guard pending || expected(stored) else {
                    conflict = .some(stored)
                    return nil
                }
                var next = !pending && stored?.deviceID == base.deviceID ? stored ?? base : base
                change(&next)
                return next
            }
        } catch let error as SecureStoreError {
            guard keepingOnFailure else { throw error.latchkeyError }
            failed = true
            self.emit(.storeUnavailable(error.problem))
        }
        if let conflict { return .conflict(conflict) }
        if !failed { self.announceStoreChange() }
        var mine = base
        change(&mine)
        self.credentials = mine
        self.hasUnsavedCredentials = failed
        return .committed(mine)
    }

    /// Writes the credentials a failed write left in memory, unless the store now holds another device's.
    func writeUnsavedCredentials() {
        guard let credentials = self.credentials else { return }
        do {
            try self.secureStore.update { stored in
                stored == nil || stored?.deviceID == credentials.deviceID ? credentials : nil
            }
            self.hasUnsavedCredentials = false
            self.announceStoreChange()
        } catch {
            // Still failing: kept in memory, tried again at the next use.
        }
    }

    /// Whether `stored` is the same session as `ours` (the same server session, possibly rotated since).
    nonisolated static func isSameSession(_ stored: StoredSession?, as ours: StoredSession) -> Bool {
        guard let stored else { return false }
        if let id = ours.sessionID, stored.sessionID == id, stored.userID == ours.userID { return true }
        return stored.accessToken == ours.accessToken
    }
}
