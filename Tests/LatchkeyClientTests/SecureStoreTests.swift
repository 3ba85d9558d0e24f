import Foundation
import LatchkeyClient
import Testing

@Suite struct SecureStoreTests {
    static let credentials = StoredCredentials(
        deviceID: UUID(), deviceSecret: "s3cret",
        session: StoredSession(
            kind: .session, userID: "u", sessionID: "sid", accessToken: "tok", accessTokenExpiresAt: Date(timeIntervalSince1970: 1_800_000_900),
            refreshToken: "ref"))
    var credentials: StoredCredentials { Self.credentials }

    func temporaryDirectory() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("latchkey-client-\(UUID().uuidString)")
    }

    @Test func fileStoreRoundTripsWithMode0600AndLeavesNoTemporaryFile() throws {
        let directory = self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = FileSecureStore(directory: directory)
        #expect(try store.load() == nil)
        try store.save(self.credentials)
        try store.save(self.credentials)
        #expect(try store.load() == self.credentials)
        let attributes = try FileManager.default.attributesOfItem(atPath: store.fileURL.path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["credentials.json"])
        try store.removeAll()
        #expect(try store.load() == nil)
    }

    @Test func versionOneDocumentIsRead() throws {
        let json = """
            {"format":1,"device_id":"0B9F6B3C-2F41-4C39-9A37-5B1C0E4D8A11","device_secret":"s","session":{"kind":"session","user_id":"u",
            "access_token":"a","access_token_expires_at":1800000900,"refresh_token":"r"}}
            """
        let decoded = try CredentialsFormat.decode(Data(json.utf8))
        #expect(decoded.deviceID == UUID(uuidString: "0b9f6b3c-2f41-4c39-9a37-5b1c0e4d8a11"))
        #expect(decoded.session?.refreshToken == "r")
    }

    @Test func newerFormatWithUnknownFieldsKeepsTheSession() throws {
        let json = """
            {"format":7,"device_id":"0b9f6b3c-2f41-4c39-9a37-5b1c0e4d8a11","something_new":{"x":1},
            "session":{"kind":"session","user_id":"u","access_token":"a","access_token_expires_at":1800000900,"refresh_token":"r","scopes":["x"]}}
            """
        #expect(try CredentialsFormat.decode(Data(json.utf8)).session?.accessToken == "a")
    }

    @Test func aSessionOfAnUnknownKindIsDroppedButTheDeviceKept() throws {
        let json = """
            {"format":2,"device_id":"0b9f6b3c-2f41-4c39-9a37-5b1c0e4d8a11","device_secret":"s",
            "session":{"kind":"passkey","user_id":"u","access_token":"a","access_token_expires_at":1}}
            """
        let decoded = try CredentialsFormat.decode(Data(json.utf8))
        #expect(decoded.session == nil)
        #expect(decoded.deviceSecret == "s")
    }

    @Test func garbageIsCorrupt() {
        #expect(throws: SecureStoreError.corrupt) { try CredentialsFormat.decode(Data("not json".utf8)) }
    }

    @Test func keychainStoreAddsThenUpdatesAnItemReadableAfterFirstUnlockOnThisDeviceOnly() throws {
        let keychain = InMemoryKeychain()
        let store = KeychainStore(service: "com.example", access: keychain)
        #expect(try store.load() == nil)
        try store.save(self.credentials)
        var changed = self.credentials
        changed.session = nil
        try store.save(changed)
        #expect(try store.load() == changed)
        #expect(keychain.calls == ["copy", "add", "add", "update", "copy"])
        #expect(keychain.items.values.allSatisfy { $0.version != nil })
        #expect(keychain.items.values.map(\.accessibility) == [.afterFirstUnlockThisDeviceOnly])
        try store.removeAll()
        try store.removeAll()
        #expect(try store.load() == nil)
    }

    @Test func aLockedKeychainIsUnavailableNotEmpty() throws {
        let keychain = InMemoryKeychain()
        let store = KeychainStore(service: "com.example", access: keychain)
        try store.save(self.credentials)
        keychain.failure = .interactionNotAllowed
        #expect(throws: SecureStoreError.unavailable("the Keychain is locked until the device is unlocked")) { try store.load() }
        #expect(throws: SecureStoreError.self) { try store.save(self.credentials) }
    }

    @Test func aLockedKeychainAtLaunchIsReportedAsUnavailableNotSignedOut() async throws {
        let keychain = InMemoryKeychain()
        let store = KeychainStore(service: "com.example", access: keychain)
        try store.save(self.credentials)
        keychain.failure = .interactionNotAllowed
        let transport = StubTransport { _ in TransportResponse(status: 500) }
        let session = LatchkeySession(
            configuration: .init(serverURL: Fixture.serverURL), secureStore: store, defaults: InMemoryKeyValueStore(), transport: transport,
            clock: ManualLatchkeyClock())
        #expect(await session.bootstrap() == .storeUnavailable(.locked))
        keychain.failure = nil
        #expect(try store.load()?.session != nil)  // nothing was lost
    }
}

/// Issue 30, item 4: the file store says what is wrong.
@Suite struct FileSecureStoreProblemTests {
    @Test func aDirectoryTheProcessMayNotCreateIsMisconfigured() throws {
        #if os(Linux)
        // /sys refuses new entries, even to root (EPERM).
        let store = FileSecureStore(directory: URL(fileURLWithPath: "/sys/latchkey-\(UUID().uuidString)"))
        let error = #expect(throws: SecureStoreError.self) { try store.save(SecureStoreTests.credentials) }
        guard case .misconfigured? = error?.problem else {
            Issue.record("expected misconfigured, got \(String(describing: error))")
            return
        }
        #endif
    }

    @Test func anotherIOFailureIsFailedWithTheSystemsReason() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("latchkey-file-\(UUID().uuidString)")
        try Data().write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        // A regular file where the directory should be: ENOTDIR.
        let store = FileSecureStore(directory: file.appendingPathComponent("inside"))
        let error = #expect(throws: SecureStoreError.self) { try store.save(SecureStoreTests.credentials) }
        guard case .failed? = error?.problem else {
            Issue.record("expected failed, got \(String(describing: error))")
            return
        }
    }

    @Test func eachErrorCaseHasItsProblem() {
        #expect(SecureStoreError.unavailable("locked").problem == .locked)
        #expect(SecureStoreError.corrupt.problem == .unreadable)
        #expect(SecureStoreError.misconfigured("no entitlement").problem == .misconfigured("no entitlement"))
        #expect(SecureStoreError.failed("disk full").problem == .failed("disk full"))
    }
}
