extension LatchkeyServices {
    /// The backend API's service (it keeps no state of its own): the routes' and `latchkey users disable|enable`'s.
    package var backend: BackendService {
        BackendService(
            store: self.store, users: self.users, sessions: self.sessions, audit: self.audit, maxBytes: self.configuration.claims.maxBytes,
            clock: self.clock)
    }
}
