#if canImport(Security)
import Foundation
import Security

/// ``KeychainItemAccess`` through the Security framework's `SecItem` functions (generic passwords in the
/// data-protection keychain).
///
/// Every query asks for the data-protection keychain (`kSecUseDataProtectionKeychain`): what iOS always uses, and on
/// macOS the keychain with access groups. A macOS app without an entitlement for it (no `keychain-access-groups` or
/// application identifier: a Developer ID tool, a command-line app) is answered `errSecMissingEntitlement`; a query
/// without an access group then falls back to the file-based keychain, and every later query of the process without
/// an access group goes there directly. A query with an access group has no fallback (the file-based keychain has no
/// groups): the store reports it as ``StoreProblem/misconfigured(_:)``.
public struct SystemKeychain: KeychainItemAccess {
    /// Creates the accessor.
    public init() {}

    /// Set once a query without an access group met `errSecMissingEntitlement` in the data-protection keychain.
    private static let usesFileBasedKeychain = Locked(false)

    /// `SecItemAdd` with `kSecAttrGeneric` (the version) and `kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly`.
    public func add(_ item: KeychainItem) -> KeychainStatus {
        var attributes = Self.query(item.location)
        attributes[kSecValueData as String] = item.data
        if let version = item.version { attributes[kSecAttrGeneric as String] = version }
        switch item.accessibility {
        case .afterFirstUnlockThisDeviceOnly: attributes[kSecAttrAccessible as String] = kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly
        }
        return Self.run(item.location, attributes) { SecItemAdd($0 as CFDictionary, nil) }
    }

    /// `SecItemCopyMatching` with `kSecReturnData`, `kSecReturnAttributes` and `kSecMatchLimitOne`.
    public func copy(_ location: KeychainLocation) -> (status: KeychainStatus, item: StoredKeychainItem?) {
        var query = Self.query(location)
        query[kSecReturnData as String] = true
        query[kSecReturnAttributes as String] = true
        query[kSecMatchLimit as String] = kSecMatchLimitOne
        var result: CFTypeRef?
        let status = Self.run(location, query) { SecItemCopyMatching($0 as CFDictionary, &result) }
        guard status == .success, let attributes = result as? [String: Any], let data = attributes[kSecValueData as String] as? Data else {
            return (status, nil)
        }
        let item = StoredKeychainItem(
            data: data, version: attributes[kSecAttrGeneric as String] as? Data, accessGroup: attributes[kSecAttrAccessGroup as String] as? String)
        return (status, item)
    }

    /// `SecItemUpdate` of `kSecValueData` and `kSecAttrGeneric`, matching `kSecAttrGeneric` when `expected` is given.
    public func update(_ location: KeychainLocation, ifVersion expected: Data?, data: Data, version: Data) -> KeychainStatus {
        var query = Self.query(location)
        if let expected { query[kSecAttrGeneric as String] = expected }
        let changes: [String: Any] = [kSecValueData as String: data, kSecAttrGeneric as String: version]
        return Self.run(location, query) { SecItemUpdate($0 as CFDictionary, changes as CFDictionary) }
    }

    /// `SecItemDelete`.
    public func delete(_ location: KeychainLocation) -> KeychainStatus {
        Self.run(location, Self.query(location)) { SecItemDelete($0 as CFDictionary) }
    }

    /// The item's class, service, account and access group, in the data-protection keychain unless this process fell
    /// back to the file-based one.
    private static func query(_ location: KeychainLocation) -> [String: Any] {
        var query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: location.service,
            kSecAttrAccount as String: location.account,
        ]
        if let group = location.accessGroup {
            query[kSecAttrAccessGroup as String] = group
            query[kSecUseDataProtectionKeychain as String] = true
        } else if !Self.usesFileBasedKeychain.withLock({ $0 }) {
            query[kSecUseDataProtectionKeychain as String] = true
        }
        return query
    }

    /// Runs `call` with `query`; when the data-protection keychain refuses a query without an access group for want of
    /// an entitlement, remembers it and runs `call` again in the file-based keychain.
    private static func run(_ location: KeychainLocation, _ query: [String: Any], _ call: ([String: Any]) -> OSStatus) -> KeychainStatus {
        let status = call(query)
        guard status == errSecMissingEntitlement, location.accessGroup == nil, query[kSecUseDataProtectionKeychain as String] != nil else {
            return KeychainStatus(status)
        }
        Self.usesFileBasedKeychain.withLock { $0 = true }
        var fileBased = query
        fileBased[kSecUseDataProtectionKeychain as String] = nil
        return KeychainStatus(call(fileBased))
    }
}

extension KeychainStatus {
    init(_ status: OSStatus) {
        switch status {
        case errSecSuccess: self = .success
        case errSecDuplicateItem: self = .duplicateItem
        case errSecItemNotFound: self = .itemNotFound
        case errSecInteractionNotAllowed: self = .interactionNotAllowed
        case errSecNotAvailable: self = .notAvailable
        case errSecMissingEntitlement: self = .missingEntitlement
        default: self = .other(status)
        }
    }
}
#endif
