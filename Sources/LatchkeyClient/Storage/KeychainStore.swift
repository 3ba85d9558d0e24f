import Foundation

/// A ``SecureStore`` in the Keychain: one generic-password item holding the versioned ``CredentialsFormat``.
///
/// The item survives an app reinstall on iOS, which is how the device identity outlives it. Saving adds the item
/// or, when it exists, updates it. A failure says what is wrong (``SecureStoreError/problem``): a Keychain locked before
/// the first unlock is ``StoreProblem/locked``, which the session reports as ``AuthState/storeUnavailable(_:)``, never as
/// signed out; an access group missing from the entitlements is ``StoreProblem/misconfigured(_:)``.
///
/// To share the session with app extensions (a widget, a share extension), give the app and each extension the same
/// Keychain Sharing group and pass it as `accessGroup`; every query names it, and items live in the data-protection
/// keychain (`kSecUseDataProtectionKeychain`), which on macOS is the one that has access groups. Adding an access group
/// in an update keeps every identity: when the group holds no item, the store looks for one without the group (in any
/// group the app can read, the app's default group included, where a version without `accessGroup` stored it) and
/// moves it into the group.
///
/// ``update(_:)`` is atomic across processes: each write stores a new random version in `kSecAttrGeneric` and updates
/// only the version it read (`SecItemUpdate` matching it). When another process wrote in between (no item matches), or
/// added the item first, it reads again and applies the change to what that process stored.
public struct KeychainStore: SecureStore {
    /// Which item holds the credentials.
    public let location: KeychainLocation
    let access: any KeychainItemAccess

    /// How many times ``update(_:)`` reads again after another process wrote between its read and its write.
    static let maximumAttempts = 8

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

    /// Reads the item (moving it into the access group when it is stored without); `nil` when there is none.
    public func load() throws -> StoredCredentials? {
        try self.read().map { try CredentialsFormat.decode($0.data) }
    }

    /// Adds the item, or updates it when it exists, whatever it holds.
    public func save(_ credentials: StoredCredentials) throws {
        let data = try CredentialsFormat.encode(credentials)
        let version = Self.newVersion()
        var status = self.access.add(self.item(data, version: version))
        if status == .duplicateItem { status = self.access.update(self.location, ifVersion: nil, data: data, version: version) }
        guard status == .success else { throw self.error(status) }
    }

    /// Reads the item and writes what `change` returns over the version it read; when another process wrote in between,
    /// reads again and calls `change` again, up to 8 attempts in all (then ``SecureStoreError/failed(_:)``).
    public func update(_ change: (StoredCredentials?) throws -> StoredCredentials?) throws {
        for _ in 0..<Self.maximumAttempts {
            let current = try self.read()
            guard let next = try change(try current.map { try CredentialsFormat.decode($0.data) }) else { return }
            let data = try CredentialsFormat.encode(next)
            let version = Self.newVersion()
            let status: KeychainStatus
            if let current {
                // An item an older SDK wrote has no version: that one write replaces it whatever it holds.
                status = self.access.update(self.location, ifVersion: current.version, data: data, version: version)
                if status == .itemNotFound { continue }  // another process changed or deleted it
            } else {
                status = self.access.add(self.item(data, version: version))
                if status == .duplicateItem { continue }  // another process added it first
            }
            guard status == .success else { throw self.error(status) }
            return
        }
        throw SecureStoreError.failed("the Keychain item changed \(Self.maximumAttempts) times while it was being updated")
    }

    /// Deletes the item, and with an access group also any copy left outside the group.
    public func removeAll() throws {
        var locations = [self.location]
        if self.location.accessGroup != nil { locations.append(self.ungrouped) }
        for location in locations {
            let status = self.access.delete(location)
            guard status == .success || status == .itemNotFound else { throw self.error(status) }
        }
    }

    func item(_ data: Data, version: Data?) -> KeychainItem {
        KeychainItem(location: self.location, data: data, version: version, accessibility: .afterFirstUnlockThisDeviceOnly)
    }

    /// The location without the access group: the item in any group the app can read.
    var ungrouped: KeychainLocation { KeychainLocation(service: self.service, account: self.account) }

    /// The item; with an access group that holds none, the one stored without the group, moved into it.
    func read() throws -> StoredKeychainItem? {
        if let item = try self.copy(self.location) { return item }
        return self.location.accessGroup == nil ? nil : try self.moveIntoAccessGroup()
    }

    /// The item at `location`; `nil` when there is none.
    func copy(_ location: KeychainLocation) throws -> StoredKeychainItem? {
        let (status, item) = self.access.copy(location)
        switch status {
        case .success:
            guard let item else { throw SecureStoreError.corrupt }
            return item
        case .itemNotFound: return nil
        default: throw self.error(status)
        }
    }

    static func newVersion() -> Data { Data(UUID().uuidString.utf8) }
}
