#if canImport(Security)
import Foundation
import Security

/// ``KeychainItemAccess`` through the Security framework's `SecItem` functions (generic passwords in the
/// data-protection keychain).
public struct SystemKeychain: KeychainItemAccess {
    /// Creates the accessor.
    public init() {}

    /// `SecItemAdd` with `kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly`.
    public func add(_ item: KeychainItem) -> KeychainStatus {
        var attributes = Self.query(item.location)
        attributes[kSecValueData as String] = item.data
        switch item.accessibility {
        case .afterFirstUnlockThisDeviceOnly: attributes[kSecAttrAccessible as String] = kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly
        }
        return KeychainStatus(SecItemAdd(attributes as CFDictionary, nil))
    }

    /// `SecItemUpdate` of `kSecValueData`.
    public func update(_ location: KeychainLocation, data: Data) -> KeychainStatus {
        let changes: [String: Any] = [kSecValueData as String: data]
        return KeychainStatus(SecItemUpdate(Self.query(location) as CFDictionary, changes as CFDictionary))
    }

    /// `SecItemCopyMatching` with `kSecReturnData`.
    public func copyData(_ location: KeychainLocation) -> (status: KeychainStatus, data: Data?) {
        var query = Self.query(location)
        query[kSecReturnData as String] = true
        query[kSecMatchLimit as String] = kSecMatchLimitOne
        var result: CFTypeRef?
        let status = SecItemCopyMatching(query as CFDictionary, &result)
        return (KeychainStatus(status), result as? Data)
    }

    /// `SecItemDelete`.
    public func delete(_ location: KeychainLocation) -> KeychainStatus {
        KeychainStatus(SecItemDelete(Self.query(location) as CFDictionary))
    }

    /// The item's class, service, account and access group, in the data-protection keychain: what macOS needs for
    /// access groups, and what iOS always uses.
    private static func query(_ location: KeychainLocation) -> [String: Any] {
        var query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: location.service,
            kSecAttrAccount as String: location.account, kSecUseDataProtectionKeychain as String: true,
        ]
        if let group = location.accessGroup { query[kSecAttrAccessGroup as String] = group }
        return query
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
