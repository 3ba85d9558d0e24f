import Foundation

/// A ``SecureStore`` in the Keychain: one generic-password item holding the versioned ``CredentialsFormat``.
///
/// The item survives an app reinstall on iOS, which is how the device identity outlives it. Saving adds the item
/// or, when it exists, updates it. A locked or unavailable Keychain is ``SecureStoreError/unavailable(_:)``,
/// which the session reports as ``AuthState/storeUnavailable(_:)``, never as signed out.
///
/// To share the session with app extensions (a widget, a share extension), give the app and each extension the same
/// Keychain Sharing group and pass it as `accessGroup`; every query names it, and items live in the data-protection
/// keychain (`kSecUseDataProtectionKeychain`), which on macOS is the one that has access groups.
public struct KeychainStore: SecureStore {
    /// Which item holds the credentials.
    public let location: KeychainLocation
    private let access: any KeychainItemAccess

    /// `kSecAttrService` of the item.
    public var service: String { self.location.service }
    /// `kSecAttrAccount` of the item.
    public var account: String { self.location.account }

    /// A store over `access` (pass an in-memory stand-in in tests).
    public init(service: String, account: String = "latchkey.credentials", accessGroup: String? = nil, access: any KeychainItemAccess) {
        self.location = KeychainLocation(service: service, account: account, accessGroup: accessGroup)
        self.access = access
    }

    #if canImport(Security)
    /// A store in the system Keychain; `accessGroup` shares it with app extensions of the same Keychain Sharing group.
    public init(service: String, account: String = "latchkey.credentials", accessGroup: String? = nil) {
        self.init(service: service, account: account, accessGroup: accessGroup, access: SystemKeychain())
    }
    #endif

    /// Reads the item; `nil` when there is none.
    public func load() throws -> StoredCredentials? {
        let (status, data) = self.access.copyData(self.location)
        switch status {
        case .success:
            guard let data else { throw SecureStoreError.corrupt }
            return try CredentialsFormat.decode(data)
        case .itemNotFound: return nil
        default: throw self.error(status)
        }
    }

    /// Adds the item, or updates it when it exists.
    public func save(_ credentials: StoredCredentials) throws {
        let data = try CredentialsFormat.encode(credentials)
        var status = self.access.add(KeychainItem(location: self.location, data: data, accessibility: .afterFirstUnlockThisDeviceOnly))
        if status == .duplicateItem { status = self.access.update(self.location, data: data) }
        guard status == .success else { throw self.error(status) }
    }

    /// Deletes the item.
    public func removeAll() throws {
        let status = self.access.delete(self.location)
        guard status == .success || status == .itemNotFound else { throw self.error(status) }
    }

    private func error(_ status: KeychainStatus) -> SecureStoreError {
        switch status {
        case .interactionNotAllowed: .unavailable("the Keychain is locked until the device is unlocked")
        case .notAvailable: .unavailable("no Keychain is available")
        case .missingEntitlement:
            .failed("the app's entitlements do not include the Keychain access group \(self.location.accessGroup ?? "(default)")")
        case .other(let code): .failed("Keychain error \(code)")
        case .success, .duplicateItem, .itemNotFound: .failed("unexpected Keychain answer")
        }
    }
}
