import Foundation
import LatchkeyClient
import Testing

/// Issue 30, items 2, 4 and 5: the Keychain store's logic over an in-memory `KeychainItemAccess` with iOS's rules.
@Suite struct KeychainStoreTests {
    static let appGroup = "TEAM.app"
    static let sharedGroup = "TEAM.shared"

    static func credentials(secret: String = "s3cret", token: String = "tok") -> StoredCredentials {
        StoredCredentials(
            deviceID: UUID(), deviceSecret: secret,
            session: StoredSession(
                kind: .session, userID: "u", sessionID: "sid", accessToken: token, accessTokenExpiresAt: Date(timeIntervalSince1970: 1_800_000_900),
                refreshToken: "ref"))
    }

    // MARK: Item 2: adding an access group in an update

    @Test func addingAnAccessGroupInAnUpdateMovesTheItemIntoTheGroupAndKeepsTheIdentity() throws {
        let keychain = InMemoryKeychain(entitledAccessGroups: [Self.appGroup, Self.sharedGroup])
        let stored = Self.credentials()
        try KeychainStore(service: "com.example", access: keychain).save(stored)  // version 1 of the app

        let version2 = KeychainStore(service: "com.example", accessGroup: Self.sharedGroup, access: keychain)
        #expect(try version2.load() == stored)
        #expect(keychain.items.keys.map(\.accessGroup) == [Self.sharedGroup])
        // The old item was deleted by the group it was read from, never by a query that also matches the moved one.
        #expect(keychain.deletedLocations.map(\.accessGroup) == [Self.appGroup])
        #expect(try version2.load() == stored)
    }

    @Test func theFirstUpdateThroughTheGroupAppliesTheChangeToTheMovedItem() throws {
        let keychain = InMemoryKeychain(entitledAccessGroups: [Self.appGroup, Self.sharedGroup])
        let stored = Self.credentials()
        try KeychainStore(service: "com.example", access: keychain).save(stored)

        let version2 = KeychainStore(service: "com.example", accessGroup: Self.sharedGroup, access: keychain)
        var seen: StoredCredentials?
        try version2.update { current in
            seen = current
            return current.map { $0.changing { $0.session = nil } }
        }
        #expect(seen == stored)
        #expect(try version2.load()?.deviceID == stored.deviceID)
        #expect(try version2.load()?.session == nil)
        #expect(keychain.items.count == 1)
    }

    @Test func withTheAccessGroupAlreadyHoldingTheItemNothingOutsideIsRead() throws {
        let keychain = InMemoryKeychain(entitledAccessGroups: [Self.appGroup, Self.sharedGroup])
        let store = KeychainStore(service: "com.example", accessGroup: Self.sharedGroup, access: keychain)
        #expect(try store.load() == nil)  // nothing anywhere: a first launch
        try store.save(Self.credentials())
        _ = try store.load()
        #expect(keychain.calls == ["copy", "copy", "add", "copy"])
    }

    @Test func removeAllWithAnAccessGroupAlsoDeletesACopyLeftOutsideIt() throws {
        let keychain = InMemoryKeychain(entitledAccessGroups: [Self.appGroup, Self.sharedGroup])
        try KeychainStore(service: "com.example", access: keychain).save(Self.credentials())
        let grouped = KeychainStore(service: "com.example", accessGroup: Self.sharedGroup, access: keychain)
        try grouped.save(Self.credentials())
        try grouped.removeAll()
        #expect(keychain.items.isEmpty)
        #expect(try grouped.load() == nil)
    }

    // MARK: Item 5: compare-and-swap across processes

    @Test func anotherProcessWritingBetweenTheReadAndTheWriteKeepsItsWriteAndTheChangeIsAppliedOnTop() throws {
        let keychain = InMemoryKeychain()
        let store = KeychainStore(service: "com.example", access: keychain)
        let original = Self.credentials(secret: "old secret", token: "old token")
        try store.save(original)
        keychain.interfere {
            var theirs = original
            theirs.deviceSecret = "their secret"
            try? KeychainStore(service: "com.example", access: keychain).save(theirs)
        }

        var attempts: [String?] = []
        try store.update { current in
            attempts.append(current?.deviceSecret)
            return current.map { $0.changing { $0.session?.accessToken = "my token" } }
        }
        #expect(attempts == ["old secret", "their secret"])
        let stored = try store.load()
        #expect(stored?.deviceSecret == "their secret")
        #expect(stored?.session?.accessToken == "my token")
    }

    @Test func anotherProcessAddingFirstIsReadInsteadOfOverwritten() throws {
        let keychain = InMemoryKeychain()
        let store = KeychainStore(service: "com.example", access: keychain)
        let theirs = Self.credentials(secret: "their secret")
        keychain.interfere { try? KeychainStore(service: "com.example", access: keychain).save(theirs) }

        var attempts: [StoredCredentials?] = []
        try store.update { current in
            attempts.append(current)
            return current ?? Self.credentials(secret: "mine")
        }
        #expect(attempts == [nil, theirs])
        #expect(try store.load() == theirs)
    }

    @Test func anUpdateGivesUpWhenAnotherProcessWritesEveryTime() throws {
        let keychain = InMemoryKeychain()
        let store = KeychainStore(service: "com.example", access: keychain)
        try store.save(Self.credentials())
        keychain.interfere(times: 100) { try? KeychainStore(service: "com.example", access: keychain).save(Self.credentials()) }
        var attempts = 0
        #expect(throws: SecureStoreError.failed("the Keychain item changed 8 times while it was being updated")) {
            try store.update { current in
                attempts += 1
                return current
            }
        }
        #expect(attempts == 8)
    }

    @Test func anItemAnOlderSDKWroteWithoutAVersionIsUpdatedAndGetsOne() throws {
        let keychain = InMemoryKeychain()
        let location = KeychainLocation(service: "com.example", account: "latchkey.credentials")
        let old = Self.credentials()
        #expect(
            keychain.add(KeychainItem(location: location, data: try CredentialsFormat.encode(old), accessibility: .afterFirstUnlockThisDeviceOnly))
                == .success)
        let store = KeychainStore(service: "com.example", access: keychain)
        try store.update { $0.map { $0.changing { $0.session = nil } } }
        #expect(try store.load()?.session == nil)
        #expect(keychain.items.values.first?.version != nil)
    }

    // MARK: Item 4: what is wrong

    @Test(arguments: [
        (KeychainStatus.interactionNotAllowed, StoreProblem.locked),
        (.notAvailable, .misconfigured("no Keychain is available")),
        (.missingEntitlement, .misconfigured("the app's entitlements do not include the Keychain access group TEAM.shared")),
        (.other(-25307), .misconfigured("the user has no default keychain")),
        (.other(-25293), .failed("Keychain error -25293")),
    ])
    func eachKeychainStatusIsTheProblemItMeans(status: KeychainStatus, problem: StoreProblem) throws {
        let keychain = InMemoryKeychain(entitledAccessGroups: [Self.appGroup, Self.sharedGroup])
        keychain.failure = status
        let store = KeychainStore(service: "com.example", accessGroup: Self.sharedGroup, access: keychain)
        let error = #expect(throws: SecureStoreError.self) { try store.load() }
        #expect(error?.problem == problem)
    }

    @Test func aGroupTheAppIsNotEntitledToIsMisconfigured() {
        let store = KeychainStore(service: "com.example", accessGroup: "OTHER.team", access: InMemoryKeychain())
        #expect(throws: SecureStoreError.misconfigured("the app's entitlements do not include the Keychain access group OTHER.team")) {
            try store.save(Self.credentials())
        }
    }

    @Test func bytesThatAreNotCredentialsAreUnreadable() throws {
        let keychain = InMemoryKeychain()
        let location = KeychainLocation(service: "com.example", account: "latchkey.credentials")
        _ = keychain.add(KeychainItem(location: location, data: Data("garbage".utf8), accessibility: .afterFirstUnlockThisDeviceOnly))
        let error = #expect(throws: SecureStoreError.self) { try KeychainStore(service: "com.example", access: keychain).load() }
        #expect(error?.problem == .unreadable)
    }
}

/// Issue 30, item 2, through a session: every Mystica player keeps their identity when version 2 adds a widget.
@Suite struct AccessGroupUpdateSessionTests {
    @Test func aSessionOfVersion2KeepsTheDeviceVersion1Stored() async throws {
        let keychain = InMemoryKeychain(entitledAccessGroups: [KeychainStoreTests.appGroup, KeychainStoreTests.sharedGroup])
        let defaults = InMemoryKeyValueStore()
        let clock = ManualLatchkeyClock()
        let transport = StubTransport { _ in TransportResponse(status: 500) }
        let version1 = LatchkeySession(
            configuration: .init(serverURL: Fixture.serverURL), secureStore: KeychainStore(service: "com.example", access: keychain),
            defaults: defaults,
            transport: transport, clock: clock)
        let deviceID = try await version1.deviceID()

        let version2 = LatchkeySession(
            configuration: .init(serverURL: Fixture.serverURL),
            secureStore: KeychainStore(service: "com.example", accessGroup: KeychainStoreTests.sharedGroup, access: keychain), defaults: defaults,
            transport: transport, clock: clock)
        #expect(try await version2.deviceID() == deviceID)
        let stored = try #require(keychain.items.values.first)
        #expect(keychain.items.count == 1 && stored.location.accessGroup == KeychainStoreTests.sharedGroup)
        #expect(try CredentialsFormat.decode(stored.data).deviceIDRestored == false)
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
