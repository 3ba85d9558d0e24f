import Foundation

/// Finds this install's device identity, creating it on first use.
///
/// The secure store is the source of truth (the Keychain survives a reinstall); UserDefaults mirrors the UUID,
/// so a store holding a device while the mirror is missing means the app was reinstalled.
struct DeviceIdentity {
    let secureStore: any SecureStore
    let defaults: any KeyValueStore
    let defaultsKey: String
    let reinstallPolicy: LatchkeySession.ReinstallPolicy

    func resolve() throws -> StoredCredentials {
        let stored: StoredCredentials?
        do { stored = try self.secureStore.load() } catch SecureStoreError.corrupt { stored = nil }
        let mirrored = self.defaults.string(forKey: self.defaultsKey).flatMap(UUID.init(uuidString:))
        guard var credentials = stored else {
            // First launch (or a store written by seed-style code that kept the UUID only in UserDefaults).
            let credentials = StoredCredentials(deviceID: mirrored ?? UUID())
            try self.secureStore.save(credentials)
            self.defaults.set(credentials.deviceID.uuidString, forKey: self.defaultsKey)
            return credentials
        }
        if mirrored == nil, self.reinstallPolicy == .dropSession, credentials.session != nil {
            credentials.session = nil
            try self.secureStore.save(credentials)
        }
        if mirrored != credentials.deviceID { self.defaults.set(credentials.deviceID.uuidString, forKey: self.defaultsKey) }
        return credentials
    }
}
