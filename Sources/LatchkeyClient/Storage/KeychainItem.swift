import Foundation

/// The four `SecItem` calls the ``KeychainStore`` needs, so its logic runs (and is tested) without the Security framework.
///
/// `SystemKeychain` is the real one on Apple platforms. An implementation follows the Keychain's rules on iOS (and in
/// the data-protection keychain on macOS): a ``KeychainLocation`` without an access group names the item in *any*
/// group the app can read, and an item added without one goes to the app's default group.
///
/// The requirements make compare-and-swap atomic across processes: every item carries a version (`kSecAttrGeneric`)
/// that ``KeychainStore`` changes with each write, ``copy(_:)`` reads it back with the item's access group, and
/// ``update(_:ifVersion:data:version:)`` writes only over the version it names. They replace the earlier
/// `copyData(_:)` and `update(_:data:)` (a deliberate source break for implementations outside the SDK, which are test
/// doubles): such an implementation also stores the version and returns it and the access group.
public protocol KeychainItemAccess: Sendable {
    /// `SecItemAdd` of a generic-password item with its data, version and accessibility.
    func add(_ item: KeychainItem) -> KeychainStatus
    /// `SecItemCopyMatching` of one item (`kSecMatchLimitOne`) returning its data and attributes: what it holds, its
    /// version and the access group it is in.
    func copy(_ location: KeychainLocation) -> (status: KeychainStatus, item: StoredKeychainItem?)
    /// `SecItemUpdate` of the data and version of the item at `location` whose version is `expected` (`nil`: whatever
    /// its version; an item an older SDK wrote has none). `itemNotFound` when there is no such item, which is also the
    /// answer when another process changed the item since it was read.
    func update(_ location: KeychainLocation, ifVersion expected: Data?, data: Data, version: Data) -> KeychainStatus
    /// `SecItemDelete` of the item at `location` (without an access group: the item in every group the app can read).
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
    /// with the team ID prefix). `nil`: an item added goes to the app's default group, and a query matches the item in
    /// any group the app can read.
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
    /// `kSecAttrGeneric`: a token the store changes with every write, so that an update can name the version it
    /// replaces; `nil` for none.
    public var version: Data?
    /// `kSecAttrAccessible`.
    public var accessibility: KeychainAccessibility

    /// Creates an item.
    public init(location: KeychainLocation, data: Data, version: Data? = nil, accessibility: KeychainAccessibility) {
        self.location = location
        self.data = data
        self.version = version
        self.accessibility = accessibility
    }
}

/// What ``KeychainItemAccess/copy(_:)`` reads of an item.
public struct StoredKeychainItem: Sendable, Equatable {
    /// `kSecValueData`.
    public var data: Data
    /// `kSecAttrGeneric`, `nil` when the item has none (an older SDK wrote it).
    public var version: Data?
    /// `kSecAttrAccessGroup`: the group the item is in, `nil` when it could not be read back. ``KeychainStore`` moves an
    /// item into its access group only when it knows the group it leaves, so that deleting the old item never deletes
    /// the new one.
    public var accessGroup: String?

    /// Creates what a read returns.
    public init(data: Data, version: Data?, accessGroup: String?) {
        self.data = data
        self.version = version
        self.accessGroup = accessGroup
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
    /// `errSecMissingEntitlement`: the access group is not among the app's Keychain Sharing groups, or the app has no
    /// entitlement for the data-protection keychain.
    case missingEntitlement
    /// Any other `OSStatus`.
    case other(Int32)
}
