import Foundation
import LatchkeyAPI
import LatchkeyClient
import Testing

/// Issue 16, item 4: what the server just issued is never lost, and unreadable stored bytes are never replaced.
@Suite struct StoreFailureTests {
    @Test func aFailedWriteKeepsTheNewSessionAndDeviceSecretInMemoryAndWritesThemLater() async throws {
        let store = FlakySecureStore()
        let transport = StubTransport { request in
            request.url.path == "/api/v1/auth/register-device"
                ? .json(201, Samples.pair(1, secret: "issued-once")) : Samples.me(accepting: ["access-1"], request)
        }
        let session = LatchkeySession(
            configuration: .init(serverURL: Fixture.serverURL, usesDeviceKey: false), secureStore: store, defaults: InMemoryKeyValueStore(),
            transport: transport, clock: ManualLatchkeyClock())
        _ = try await session.deviceID()
        store.failsWrites = true

        let registered = try await session.registerDevice()
        #expect(registered.userID == "user")
        #expect(await session.state.isSignedIn)
        #expect(try await session.currentUser().userID == "user")  // the session works from memory
        #expect(store.contents?.deviceSecret == nil)

        store.failsWrites = false
        _ = try await session.currentUser()
        #expect(store.contents?.deviceSecret == "issued-once")
        #expect(store.contents?.session?.accessToken == "access-1")
    }

    @Test func unreadableStoredBytesAreKeptAndReportedNotReplacedByANewIdentity() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("latchkey-corrupt-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = FileSecureStore(directory: directory)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let garbage = Data("{\"format\": 1, \"device_id\": \"not-a-uuid\"".utf8)
        try garbage.write(to: store.fileURL)
        let session = LatchkeySession(
            configuration: .init(serverURL: Fixture.serverURL), secureStore: store, defaults: InMemoryKeyValueStore(),
            transport: StubTransport { _ in TransportResponse(status: 500) }, clock: ManualLatchkeyClock())

        #expect(await session.bootstrap() == .storeUnavailable(.unreadable))
        await #expect(throws: LatchkeyError.self) { try await session.deviceID() }
        await #expect(throws: LatchkeyError.self) { try await session.registerDevice() }
        #expect(try Data(contentsOf: store.fileURL) == garbage)

        // Replacing them is the app's decision.
        try await session.resetDeviceIdentity()
        #expect(try store.load()?.deviceID == (try await session.deviceID()))
    }
}
