import Foundation

/// The four `SecItem` calls the ``KeychainStore`` needs, so its logic runs (and is tested) without the Security framework.
///
/// ``SystemKeychain`` is the real one on Apple platforms.
public protocol KeychainItemAccess: Sendable {
    /// `SecItemAdd` of a generic-password item.
    func add(_ item: KeychainItem) -> KeychainStatus
    /// `SecItemUpdate` of the item's data.
    func update(service: String, account: String, data: Data) -> KeychainStatus
    /// `SecItemCopyMatching` returning the item's data.
    func copyData(service: String, account: String) -> (status: KeychainStatus, data: Data?)
    /// `SecItemDelete`.
    func delete(service: String, account: String) -> KeychainStatus
}

/// A generic-password Keychain item as the ``KeychainStore`` adds it.
public struct KeychainItem: Sendable, Equatable {
    /// `kSecAttrService`.
    public var service: String
    /// `kSecAttrAccount`.
    public var account: String
    /// `kSecValueData`.
    public var data: Data
    /// `kSecAttrAccessible`.
    public var accessibility: KeychainAccessibility

    /// Creates an item.
    public init(service: String, account: String, data: Data, accessibility: KeychainAccessibility) {
        self.service = service
        self.account = account
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
    /// Any other `OSStatus`.
    case other(Int32)
}

/// A ``SecureStore`` in the Keychain: one generic-password item holding the versioned ``CredentialsFormat``.
///
/// The item survives an app reinstall on iOS, which is how the device identity outlives it. Saving adds the item
/// or, when it exists, updates it. A locked or unavailable Keychain is ``SecureStoreError/unavailable(_:)``,
/// which the session reports as ``AuthState/storeUnavailable``, never as signed out.
public struct KeychainStore: SecureStore {
    /// `kSecAttrService` of the item.
    public let service: String
    /// `kSecAttrAccount` of the item.
    public let account: String
    private let access: any KeychainItemAccess

    /// A store over `access` (pass an in-memory stand-in in tests).
    public init(service: String, account: String = "latchkey.credentials", access: any KeychainItemAccess) {
        self.service = service
        self.account = account
        self.access = access
    }

    #if canImport(Security)
    /// A store in the system Keychain.
    public init(service: String, account: String = "latchkey.credentials") {
        self.init(service: service, account: account, access: SystemKeychain())
    }
    #endif

    /// Reads the item; `nil` when there is none.
    public func load() throws -> StoredCredentials? {
        let (status, data) = self.access.copyData(service: self.service, account: self.account)
        switch status {
        case .success:
            guard let data else { throw SecureStoreError.corrupt }
            return try CredentialsFormat.decode(data)
        case .itemNotFound: return nil
        default: throw Self.error(status)
        }
    }

    /// Adds the item, or updates it when it exists.
    public func save(_ credentials: StoredCredentials) throws {
        let data = try CredentialsFormat.encode(credentials)
        let item = KeychainItem(service: self.service, account: self.account, data: data, accessibility: .afterFirstUnlockThisDeviceOnly)
        var status = self.access.add(item)
        if status == .duplicateItem { status = self.access.update(service: self.service, account: self.account, data: data) }
        guard status == .success else { throw Self.error(status) }
    }

    /// Deletes the item.
    public func removeAll() throws {
        let status = self.access.delete(service: self.service, account: self.account)
        guard status == .success || status == .itemNotFound else { throw Self.error(status) }
    }

    private static func error(_ status: KeychainStatus) -> SecureStoreError {
        switch status {
        case .interactionNotAllowed: .unavailable("the Keychain is locked until the device is unlocked")
        case .notAvailable: .unavailable("no Keychain is available")
        case .other(let code): .failed("Keychain error \(code)")
        case .success, .duplicateItem, .itemNotFound: .failed("unexpected Keychain answer")
        }
    }
}
