// Run by scripts/check-keychain. Issue 30: identities that survive adding an access group (item 2), a macOS app
// without the data-protection entitlement (item 4) and compare-and-swap across processes (item 5), through
// SystemKeychain's real SecItem queries against the stand-in keychain.
import Foundation
import LatchkeyClient
import Security
import Testing

extension SystemKeychainTests {
    static let appGroup = "TEAMID.com.example.app"
    static let sharedGroup = "TEAMID.com.example.shared"

    @Test func version2WithAnAccessGroupLoadsWhatVersion1StoredWithoutOneAndMovesIt() throws {
        StandInKeychain.shared.reset()
        StandInKeychain.shared.entitledAccessGroups = [Self.appGroup, Self.sharedGroup]
        defer { StandInKeychain.shared.reset() }
        let version1 = KeychainStore(service: Self.service)
        let stored = Self.credentials(token: "from version 1")
        try version1.save(stored)
        #expect(StandInKeychain.shared.item(service: Self.service, account: version1.account, group: Self.appGroup) != nil)

        let version2 = KeychainStore(service: Self.service, accessGroup: Self.sharedGroup)
        let loaded = try #require(try version2.load())
        #expect(loaded.deviceID == stored.deviceID)
        #expect(loaded == stored)
        // Moved: in the shared group only, the old item gone.
        #expect(StandInKeychain.shared.count(service: Self.service, account: version2.account) == 1)
        #expect(StandInKeychain.shared.item(service: Self.service, account: version2.account, group: Self.appGroup) == nil)
        let moved = try #require(StandInKeychain.shared.item(service: Self.service, account: version2.account, group: Self.sharedGroup))
        #expect(moved.accessibility == kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly as String)
        #expect(moved.inDataProtectionKeychain)
        #expect(try version2.load() == stored)

        // The widget, entitled to the shared group only, finds it too.
        StandInKeychain.shared.entitledAccessGroups = ["TEAMID.com.example.widget", Self.sharedGroup]
        #expect(try KeychainStore(service: Self.service, accessGroup: Self.sharedGroup).load()?.deviceID == stored.deviceID)
    }

    @Test func anotherProcessWritingBetweenTheReadAndTheWriteKeepsItsWrite() throws {
        StandInKeychain.shared.reset()
        defer { StandInKeychain.shared.reset() }
        let store = KeychainStore(service: Self.service)
        let original = Self.credentials(token: "old")
        try store.save(original)
        let firstVersion = try #require(StandInKeychain.shared.item(service: Self.service, account: store.account)?.generic)
        StandInKeychain.shared.beforeNextWrite {
            var theirs = original
            theirs.deviceSecret = "their secret"
            try? KeychainStore(service: Self.service).save(theirs)
        }

        var calls = 0
        try store.update { current in
            calls += 1
            return current.map { $0.changing { $0.session?.accessToken = "mine" } }
        }
        #expect(calls == 2)
        let stored = try store.load()
        #expect(stored?.deviceSecret == "their secret")
        #expect(stored?.session?.accessToken == "mine")
        #expect(StandInKeychain.shared.item(service: Self.service, account: store.account)?.generic != firstVersion)
    }

    @Test func anotherProcessAddingFirstIsReadNotOverwritten() throws {
        StandInKeychain.shared.reset()
        defer { StandInKeychain.shared.reset() }
        let store = KeychainStore(service: Self.service)
        let theirs = Self.credentials(token: "theirs")
        StandInKeychain.shared.beforeNextWrite { try? KeychainStore(service: Self.service).save(theirs) }
        try store.update { current in current ?? Self.credentials(token: "mine") }
        #expect(try store.load() == theirs)
    }

    @Test func aMacAppWithoutTheDataProtectionEntitlementFallsBackToTheFileBasedKeychainOnce() throws {
        StandInKeychain.shared.reset()
        StandInKeychain.shared.hasDataProtectionEntitlement = false
        defer { StandInKeychain.shared.reset() }
        let store = KeychainStore(service: Self.service, account: "mac")
        let stored = Self.credentials(token: "mac")
        try store.save(stored)
        #expect(try store.load() == stored)
        try store.update { $0 }
        #expect(StandInKeychain.shared.item(service: Self.service, account: "mac")?.inDataProtectionKeychain == false)
        // At most one refusal: the process remembers the fallback (none when an earlier test already made it).
        #expect(StandInKeychain.shared.dataProtectionRefusals <= 1)
        let before = StandInKeychain.shared.dataProtectionRefusals
        #expect(try KeychainStore(service: Self.service, account: "mac").load() == stored)
        #expect(StandInKeychain.shared.dataProtectionRefusals == before)

        // With an access group there is no file-based fallback: the app's setup is wrong, and the store says so.
        let grouped = KeychainStore(service: Self.service, account: "mac", accessGroup: Self.appGroup)
        let error = #expect(throws: SecureStoreError.self) { try grouped.load() }
        #expect(error?.problem == .misconfigured("the app's entitlements do not include the Keychain access group \(Self.appGroup)"))
    }
}

extension StoredCredentials {
    /// A copy with `change` applied.
    fileprivate func changing(_ change: (inout StoredCredentials) -> Void) -> StoredCredentials {
        var copy = self
        change(&copy)
        return copy
    }
}
