import Foundation
import LatchkeyAPI
import LatchkeyClient
import Testing

/// Issue 30, item 15: an app extension follows what the app writes to the store they share, as soon as the app writes.
@Suite(.timeLimit(.minutes(1))) struct SharedStoreNotificationTests {
    /// An app and its widget: two sessions over one store, one notifier and one stub server.
    struct AppAndWidget {
        let fixture: Fixture
        let app: LatchkeySession
        let widget: LatchkeySession
        /// The user `DELETE /users/me` says it deleted.
        let deletedUserID = Shared("user")

        init() throws {
            let deletedUserID = self.deletedUserID
            self.fixture = Fixture { request in
                switch request.url.path {
                case "/api/v1/auth/logout": .json(200, LogoutResponse(revokedSessions: 1))
                case "/api/v1/auth/login": .json(200, Samples.pair(5, userID: "ann"))
                case "/api/v1/users/me": .json(200, AccountDeletionResponse(userID: deletedUserID.value, revokedSessions: 1, appleTokensRevoked: 0))
                default: Samples.me(accepting: ["access-1", "access-5"], request)
                }
            }
            try self.fixture.storeSession()  // user 1's session, stored by the app
            let notifier = InProcessStoreChangeNotifier()
            self.app = self.fixture.session { $0.storeChangeNotifier = notifier }
            self.widget = LatchkeySession(
                configuration: .init(serverURL: Fixture.serverURL, isAppExtension: true, storeChangeNotifier: notifier),
                secureStore: self.fixture.store, defaults: InMemoryKeyValueStore(), transport: self.fixture.transport, clock: self.fixture.clock)
        }
    }

    /// The next state of `states` that `matches`; `nil` when the stream ends first.
    static func awaitState(_ states: inout AsyncStream<AuthState>.Iterator, _ matches: (AuthState) -> Bool) async -> AuthState? {
        while let state = await states.next() { if matches(state) { return state } }
        return nil
    }

    @Test func theWidgetMovesToTheUserTheAppSwitchedTo() async throws {
        let shared = try AppAndWidget()
        #expect(
            await shared.widget.bootstrap() == .signedIn(AuthSession(userID: "user", kind: .session, expiresAt: shared.fixture.clock.now() + 900)))
        #expect(await shared.app.bootstrap().isSignedIn)
        var states = await shared.widget.authStates().makeAsyncIterator()

        try await shared.app.signOut()
        let ann = try await shared.app.signIn(email: "ann@example.com", password: "correct horse battery")

        #expect(await Self.awaitState(&states) { $0 == .signedIn(ann) } == .signedIn(ann))
        #expect(try await shared.widget.accessToken() == "access-5")
    }

    @Test func aSignOutInTheAppSignsTheWidgetOut() async throws {
        let shared = try AppAndWidget()
        #expect(await shared.widget.bootstrap().isSignedIn)
        let events = await EventRecorder(shared.widget)
        var states = await shared.widget.authStates().makeAsyncIterator()

        try await shared.app.signOut()

        #expect(await Self.awaitState(&states) { !$0.isSignedIn } == .signedOut(reason: .signedOutElsewhere))
        #expect(events.events.contains(.signedOut(.signedOutElsewhere)))
        await #expect(throws: LatchkeyError.notSignedIn) { try await shared.widget.accessToken() }
    }

    @Test func aDeletedAccountInTheAppGivesTheWidgetTheNewDeviceIdentity() async throws {
        let shared = try AppAndWidget()
        #expect(await shared.widget.bootstrap().isSignedIn)
        let deviceID = try await shared.app.deviceID()
        var states = await shared.widget.authStates().makeAsyncIterator()
        shared.deletedUserID.value = deviceID.uuidString.lowercased()

        try await shared.app.deleteAccount()  // the device's own user: the app starts a new device identity

        #expect(await Self.awaitState(&states) { !$0.isSignedIn } == .signedOut(reason: .signedOutElsewhere))
        let newDeviceID = try await shared.app.deviceID()
        #expect(newDeviceID != deviceID)
        #expect(try await shared.widget.deviceID() == newDeviceID)
    }
}
