#if canImport(Security)
import Foundation
import Security

/// ``KeychainItemAccess`` through the Security framework's `SecItem` functions (generic passwords).
public struct SystemKeychain: KeychainItemAccess {
    /// Creates the accessor.
    public init() {}

    /// `SecItemAdd` with `kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly`.
    public func add(_ item: KeychainItem) -> KeychainStatus {
        var attributes = Self.query(service: item.service, account: item.account)
        attributes[kSecValueData as String] = item.data
        switch item.accessibility {
        case .afterFirstUnlockThisDeviceOnly: attributes[kSecAttrAccessible as String] = kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly
        }
        return KeychainStatus(SecItemAdd(attributes as CFDictionary, nil))
    }

    /// `SecItemUpdate` of `kSecValueData`.
    public func update(service: String, account: String, data: Data) -> KeychainStatus {
        let changes: [String: Any] = [kSecValueData as String: data]
        return KeychainStatus(SecItemUpdate(Self.query(service: service, account: account) as CFDictionary, changes as CFDictionary))
    }

    /// `SecItemCopyMatching` with `kSecReturnData`.
    public func copyData(service: String, account: String) -> (status: KeychainStatus, data: Data?) {
        var query = Self.query(service: service, account: account)
        query[kSecReturnData as String] = true
        query[kSecMatchLimit as String] = kSecMatchLimitOne
        var result: CFTypeRef?
        let status = SecItemCopyMatching(query as CFDictionary, &result)
        return (KeychainStatus(status), result as? Data)
    }

    /// `SecItemDelete`.
    public func delete(service: String, account: String) -> KeychainStatus {
        KeychainStatus(SecItemDelete(Self.query(service: service, account: account) as CFDictionary))
    }

    private static func query(service: String, account: String) -> [String: Any] {
        [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service, kSecAttrAccount as String: account]
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
        default: self = .other(status)
        }
    }
}
#endif
