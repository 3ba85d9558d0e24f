import Foundation

/// Finds this install's device identity, creating it on first use.
///
/// The secure store is the source of truth (the Keychain survives a reinstall); the defaults store mirrors the UUID,
/// so a store holding a device while the mirror is missing means the app was reinstalled. Not in an app extension: it
/// shares the app's Keychain item but has UserDefaults of its own, so its first launch would look like a reinstall.
/// Stored bytes that cannot be read are reported (``SecureStoreError/corrupt``) and left as they are, never replaced by
/// a new identity: ``LatchkeySession/resetDeviceIdentity()`` does that when the app decides to.
struct DeviceIdentity {
    let secureStore: any SecureStore
    let defaults: any KeyValueStore
    let defaultsKey: String
    let reinstallPolicy: LatchkeySession.ReinstallPolicy
    let isAppExtension: Bool

    func resolve() throws -> StoredCredentials {
        let mirrored = self.defaults.string(forKey: self.defaultsKey).flatMap(UUID.init(uuidString:))
        var resolved: StoredCredentials?
        try self.secureStore.update { stored in
            guard var credentials = stored else {
                // First launch; or the UUID came back without the Keychain item (a phone restored from a backup, or app
                // code that kept it only in UserDefaults): this install has yet to prove it owns that UUID.
                let credentials = StoredCredentials(deviceID: mirrored ?? UUID(), deviceIDRestored: mirrored != nil)
                resolved = credentials
                return credentials
            }
            resolved = credentials
            guard mirrored == nil, !self.isAppExtension, self.reinstallPolicy == .dropSession, credentials.session != nil else { return nil }
            credentials.session = nil
            resolved = credentials
            return credentials
        }
        guard let credentials = resolved else { throw SecureStoreError.failed("the credentials could not be resolved") }
        if mirrored != credentials.deviceID { self.defaults.set(credentials.deviceID.uuidString, forKey: self.defaultsKey) }
        return credentials
    }
}
