// Run by scripts/check-keychain: the SDK's UIKit and Combine code, compiled against the stand-ins. (UIKit and Combine
// are used through StandIns.swift: a file importing both Testing and UIKit asks for Swift Testing's UIKit overlay,
// which Linux does not have.)
import Foundation
import LatchkeyAPI
import LatchkeyClient
import Testing

@Suite(.serialized)
struct AppleOnlyCodeTests {
    static let serverURL = URL(string: "https://auth.example.test")!

    /// A stored device session (access-1 / refresh-1) that expires in `lifetime` seconds.
    static func store(lifetime: TimeInterval) -> InMemorySecureStore {
        InMemorySecureStore(
            StoredCredentials(
                deviceID: UUID(), deviceKey: DeviceKey.generate(),
                session: StoredSession(
                    kind: .session, userID: "user", sessionID: "s", accessToken: "access-1",
                    accessTokenExpiresAt: Date().addingTimeInterval(lifetime), refreshToken: "refresh-1")))
    }

    @Test @MainActor func theObservableObjectFollowsTheSessionAndAnnouncesEachChange() async throws {
        let session = LatchkeySession(
            configuration: .init(serverURL: Self.serverURL), secureStore: InMemorySecureStore(), defaults: InMemoryKeyValueStore(),
            transport: Answers.registering)
        let auth = AuthObservableObject(session: session)
        let observing = Task { await auth.observe() }
        defer { observing.cancel() }
        try await session.registerDevice()
        for _ in 0..<1000 where !auth.state.isSignedIn { await Task.yield() }
        #expect(auth.state.isSignedIn)
        #expect(StandIns.willChangeCount(of: auth) >= 1)
    }

    @Test @MainActor func followingTheAppLifecycleRefreshesInsideABackgroundTaskWhenTheAppComesBack() async throws {
        StandIns.application.reset()
        // Expiring within the default 300 s buffer; the refreshed token (900 s) is not, so the foreground events posted
        // while the first refresh ran find nothing more to refresh.
        let store = Self.store(lifetime: 100)
        let session = LatchkeySession(
            // The store was filled without a launch, so no device-ID mirror: keep the session rather than take it for a reinstall.
            configuration: .init(serverURL: Self.serverURL, reinstallPolicy: .keepSession), secureStore: store,
            defaults: InMemoryKeyValueStore(), transport: Answers.refreshing)
        _ = try await session.deviceID()
        let following = Task { await session.followAppLifecycle() }
        defer { following.cancel() }
        // The observers are registered once the following task runs: post until the first refresh has begun.
        for _ in 0..<1000 where StandIns.application.begunTaskNames.isEmpty {
            StandIns.postWillEnterForeground()
            try await Task.sleep(nanoseconds: 1_000_000)
        }
        for _ in 0..<1000 where try store.load()?.session?.accessToken != "access-2" || StandIns.application.runningTaskCount > 0 {
            try await Task.sleep(nanoseconds: 1_000_000)
        }
        #expect(try store.load()?.session?.accessToken == "access-2")
        #expect(StandIns.application.begunTaskNames == ["Latchkey token refresh"])
        #expect(StandIns.application.runningTaskCount == 0)
    }
}

/// Scripted answers, no network.
struct Answers: HTTPTransport {
    let answer: @Sendable (TransportRequest) -> TransportResponse

    static let registering = Answers { _ in Self.pair(1) }
    static let refreshing = Answers { request in request.url.path == "/api/v1/auth/refresh" ? Self.pair(2) : TransportResponse(status: 200) }

    static func pair(_ n: Int) -> TransportResponse {
        let pair = TokenPairResponse(
            accessToken: "access-\(n)", expiresIn: 900, refreshToken: "refresh-\(n)", refreshTokenExpiresIn: 86400, userID: "user",
            sessionID: "s", deviceSecret: nil)
        return TransportResponse(status: 200, body: try! JSONEncoder().encode(pair))
    }

    func send(_ request: TransportRequest) async throws -> TransportResponse { self.answer(request) }
}
