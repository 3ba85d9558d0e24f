import Foundation

extension KeychainStore {
    /// Moves the item a version of the app without `accessGroup` stored (in its default group) into the access group:
    /// adds it there, then deletes the old item by the group it was read from, never by a query that would also match
    /// the new one. `nil` when there is no such item.
    func moveIntoAccessGroup() throws -> StoredKeychainItem? {
        guard let old = try self.copy(self.ungrouped) else { return nil }
        let added = self.access.add(self.item(old.data, version: old.version))
        guard added == .success || added == .duplicateItem else { throw self.error(added) }
        if let oldGroup = old.accessGroup, oldGroup != self.location.accessGroup {
            // Best effort: a copy left behind is never read while the group holds the item, and removeAll() deletes it.
            _ = self.access.delete(KeychainLocation(service: self.service, account: self.account, accessGroup: oldGroup))
        }
        guard added == .duplicateItem else { return StoredKeychainItem(data: old.data, version: old.version, accessGroup: self.location.accessGroup) }
        // Another process moved it (or stored the group's item) first: the group's item is the one.
        guard let item = try self.copy(self.location) else { throw self.error(.itemNotFound) }
        return item
    }

    /// What a `SecItem` status means for the app.
    func error(_ status: KeychainStatus) -> SecureStoreError {
        switch status {
        case .interactionNotAllowed: .unavailable("the Keychain is locked until the device is unlocked")
        case .notAvailable: .misconfigured("no Keychain is available")
        case .missingEntitlement:
            if let group = self.location.accessGroup {
                .misconfigured("the app's entitlements do not include the Keychain access group \(group)")
            } else {
                .misconfigured("the app has no Keychain entitlement")
            }
        case .other(Self.noSuchKeychain), .other(Self.noDefaultKeychain): .misconfigured("the user has no default keychain")
        case .other(let code): .failed("Keychain error \(code)")
        case .success, .duplicateItem, .itemNotFound: .failed("unexpected Keychain answer")
        }
    }

    /// `errSecNoSuchKeychain` and `errSecNoDefaultKeychain` (macOS's file-based keychain, e.g. a user without a login
    /// keychain).
    static let noSuchKeychain: Int32 = -25294
    static let noDefaultKeychain: Int32 = -25307
}
