// Run by scripts/check-keychain: the SDK compiled with `canImport(Security)` true, against the stand-in
// Security module, so the Apple-only `SystemKeychain` and `KeychainStore(service:account:)` build and run.
import Foundation
import LatchkeyClient
import Security
import Testing

@Suite(.serialized)
struct SystemKeychainTests {
    static let service = "com.example.app"

    static func credentials(token: String) -> StoredCredentials {
        StoredCredentials(
            deviceID: UUID(), deviceSecret: "s3cret",
            session: StoredSession(
                kind: .session, userID: "u", sessionID: "sid", accessToken: token,
                accessTokenExpiresAt: Date(timeIntervalSince1970: 1_800_000_900), refreshToken: "ref"))
    }

    @Test func savesLoadsUpdatesAndRemovesOneGenericPasswordItem() throws {
        StandInKeychain.shared.reset()
        let store = KeychainStore(service: Self.service)
        #expect(try store.load() == nil)

        let first = Self.credentials(token: "first")
        try store.save(first)
        #expect(try store.load() == first)
        let item = try #require(StandInKeychain.shared.item(service: Self.service, account: store.account))
        #expect(item.accessibility == kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly as String)

        // The second save meets errSecDuplicateItem and updates the item instead.
        let second = Self.credentials(token: "second")
        try store.save(second)
        #expect(try store.load() == second)

        try store.removeAll()
        #expect(try store.load() == nil)
        #expect(StandInKeychain.shared.item(service: Self.service, account: store.account) == nil)
        try store.removeAll()  // nothing to remove is not an error
    }

    @Test func aLockedKeychainIsUnavailableNotSignedOut() throws {
        StandInKeychain.shared.reset()
        let store = KeychainStore(service: Self.service)
        try store.save(Self.credentials(token: "kept"))
        StandInKeychain.shared.isLocked = true
        defer { StandInKeychain.shared.reset() }

        let error = #expect(throws: SecureStoreError.unavailable("the Keychain is locked until the device is unlocked")) { try store.load() }
        #expect(error?.problem == .locked)
        #expect(throws: SecureStoreError.unavailable("the Keychain is locked until the device is unlocked")) {
            try store.save(Self.credentials(token: "new"))
        }
        StandInKeychain.shared.isLocked = false
        #expect(try store.load()?.session?.accessToken == "kept")
    }

    @Test func noKeychainIsMisconfigured() throws {
        StandInKeychain.shared.reset()
        StandInKeychain.shared.isUnavailable = true
        defer { StandInKeychain.shared.reset() }
        let error = #expect(throws: SecureStoreError.self) { try KeychainStore(service: Self.service).load() }
        #expect(error?.problem == .misconfigured("no Keychain is available"))
    }

    @Test func twoAccountsAreTwoItems() throws {
        StandInKeychain.shared.reset()
        let app = KeychainStore(service: Self.service)
        let other = KeychainStore(service: Self.service, account: "other")
        try app.save(Self.credentials(token: "app"))
        #expect(try other.load() == nil)
        try other.save(Self.credentials(token: "other"))
        #expect(try app.load()?.session?.accessToken == "app")
    }

    @Test func systemKeychainAnswersEachStatusAsTheStoreExpects() {
        StandInKeychain.shared.reset()
        let keychain = SystemKeychain()
        let location = KeychainLocation(service: Self.service, account: "a")
        let item = KeychainItem(location: location, data: Data([1]), accessibility: .afterFirstUnlockThisDeviceOnly)
        #expect(keychain.copy(location).status == .itemNotFound)
        #expect(keychain.add(item) == .success)
        #expect(keychain.add(item) == .duplicateItem)
        #expect(keychain.update(location, ifVersion: nil, data: Data([2]), version: Data("v2".utf8)) == .success)
        #expect(keychain.copy(location).item == StoredKeychainItem(data: Data([2]), version: Data("v2".utf8), accessGroup: "TEAMID.com.example.app"))
        // Only the version named matches (kSecAttrGeneric in the SecItemUpdate query).
        #expect(keychain.update(location, ifVersion: Data("v1".utf8), data: Data([3]), version: Data("v3".utf8)) == .itemNotFound)
        #expect(keychain.update(location, ifVersion: Data("v2".utf8), data: Data([3]), version: Data("v3".utf8)) == .success)
        #expect(keychain.copy(location).item?.data == Data([3]))
        #expect(keychain.delete(location) == .success)
        #expect(keychain.delete(location) == .itemNotFound)
        #expect(keychain.update(location, ifVersion: nil, data: Data([4]), version: Data("v4".utf8)) == .itemNotFound)
    }

    /// Issue 16, item 2: the app and its extensions share one item through a Keychain Sharing group.
    @Test func anAccessGroupSharesTheItemWithAppExtensionsInTheDataProtectionKeychain() throws {
        StandInKeychain.shared.reset()
        StandInKeychain.shared.entitledAccessGroups = ["TEAMID.com.example.app", "TEAMID.com.example.shared"]
        defer { StandInKeychain.shared.reset() }
        let app = KeychainStore(service: Self.service, accessGroup: "TEAMID.com.example.shared")
        try app.save(Self.credentials(token: "shared"))
        let item = try #require(StandInKeychain.shared.item(service: Self.service, account: app.account))
        #expect(item.accessGroup == "TEAMID.com.example.shared")
        #expect(item.inDataProtectionKeychain)

        // The widget, entitled to the shared group only, reads and updates the same item.
        StandInKeychain.shared.entitledAccessGroups = ["TEAMID.com.example.widget", "TEAMID.com.example.shared"]
        let widget = KeychainStore(service: Self.service, accessGroup: "TEAMID.com.example.shared")
        #expect(try widget.load()?.session?.accessToken == "shared")
        try widget.save(Self.credentials(token: "refreshed by the widget"))
        #expect(try app.load()?.session?.accessToken == "refreshed by the widget")
        // Without the group the widget looks in its own default group first, then the shared one: the same item.
        #expect(try KeychainStore(service: Self.service).load()?.session?.accessToken == "refreshed by the widget")
    }

    @Test func aGroupTheAppIsNotEntitledToIsMisconfigured() {
        StandInKeychain.shared.reset()
        let store = KeychainStore(service: Self.service, accessGroup: "TEAMID.com.other.team")
        let error = #expect(throws: SecureStoreError.self) { try store.save(Self.credentials(token: "x")) }
        #expect(error?.problem == .misconfigured("the app's entitlements do not include the Keychain access group TEAMID.com.other.team"))
    }
}
