import Foundation

/// The four `SecItem` calls the ``KeychainStore`` needs, so its logic runs (and is tested) without the Security framework.
///
/// `SystemKeychain` is the real one on Apple platforms.
public protocol KeychainItemAccess: Sendable {
    /// `SecItemAdd` of a generic-password item.
    func add(_ item: KeychainItem) -> KeychainStatus
    /// `SecItemUpdate` of the data of the item at `location`.
    func update(_ location: KeychainLocation, data: Data) -> KeychainStatus
    /// `SecItemCopyMatching` returning the data of the item at `location`.
    func copyData(_ location: KeychainLocation) -> (status: KeychainStatus, data: Data?)
    /// `SecItemDelete` of the item at `location`.
    func delete(_ location: KeychainLocation) -> KeychainStatus
}

/// Which generic-password item: `kSecAttrService`, `kSecAttrAccount` and, to share it with app extensions and other
/// apps of the same team, `kSecAttrAccessGroup`.
public struct KeychainLocation: Sendable, Hashable {
    /// `kSecAttrService`.
    public var service: String
    /// `kSecAttrAccount`.
    public var account: String
    /// `kSecAttrAccessGroup`, e.g. `"ABCDE12345.com.example.shared"` (a Keychain Sharing group of the app's entitlements,
    /// with the team ID prefix); `nil` for the app's default group.
    public var accessGroup: String?

    /// Names an item.
    public init(service: String, account: String, accessGroup: String? = nil) {
        self.service = service
        self.account = account
        self.accessGroup = accessGroup
    }
}

/// A generic-password Keychain item as the ``KeychainStore`` adds it.
public struct KeychainItem: Sendable, Equatable {
    /// Which item.
    public var location: KeychainLocation
    /// `kSecValueData`.
    public var data: Data
    /// `kSecAttrAccessible`.
    public var accessibility: KeychainAccessibility

    /// Creates an item.
    public init(location: KeychainLocation, data: Data, accessibility: KeychainAccessibility) {
        self.location = location
        self.data = data
        self.accessibility = accessibility
    }
}

/// When a Keychain item can be read.
public enum KeychainAccessibility: String, Sendable, Equatable {
    /// `kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly`: readable in the background once the device was unlocked after boot,
    /// never restored onto another device from a backup.
    case afterFirstUnlockThisDeviceOnly
}

/// The result codes of `SecItem` calls the ``KeychainStore`` tells apart.
public enum KeychainStatus: Sendable, Equatable {
    /// `errSecSuccess`.
    case success
    /// `errSecDuplicateItem`.
    case duplicateItem
    /// `errSecItemNotFound`.
    case itemNotFound
    /// `errSecInteractionNotAllowed`: the device is locked (before first unlock).
    case interactionNotAllowed
    /// `errSecNotAvailable`: no Keychain.
    case notAvailable
    /// `errSecMissingEntitlement`: the access group is not among the app's Keychain Sharing groups.
    case missingEntitlement
    /// Any other `OSStatus`.
    case other(Int32)
}
