import Foundation
import LatchkeyClient
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Seed 002 (Mystica) through ``MysticaAuth`` and ``MysticaWidgetAuth``: instant play, the widget on the app's player,
/// an email added to that player later.
@Suite struct Seed002MysticaTests {
    /// Latchkey registers a device as the user named by its UUID; `auth/me`, `auth/register` and the game API take
    /// `access-1` only; `offline` makes the email registration meet no network.
    static func install(offline: Bool = false) -> StubbedInstall {
        StubbedInstall { request in
            switch (request.url.host ?? "", request.url.path) {
            case ("auth.mystica.app", "/api/v1/auth/register-device"):
                let body = try JSONDecoder().decode(RegisterDeviceRequest.self, from: request.body ?? Data())
                return .tokenPair(1, userID: body.deviceID)
            case ("auth.mystica.app", "/api/v1/auth/me") where request.bearer == "access-1":
                return .profile("player")
            case ("auth.mystica.app", "/api/v1/auth/register") where request.bearer == "access-1":
                if offline { throw URLError(.notConnectedToInternet) }
                return .json(201, EmailAccountResponse(userID: "player", email: "ann@example.com", emailVerified: false))
            case ("api.mystica.app", "/v1/inventory") where request.bearer == "access-1":
                return .json(200, ["swords": 2])
            default:
                return .error(401, .invalidToken)
            }
        }
    }

    @Test func firstLaunchPlaysAtOnceAndTheWidgetUsesTheAppsPlayerWithoutRegistering() async throws {
        let install = Self.install()
        let notifier = InProcessStoreChangeNotifier()  // what the access group's Darwin notifications do between processes
        var appConfiguration = MysticaAuth.configuration(isAppExtension: false)
        appConfiguration.storeChangeNotifier = notifier
        let app = MysticaAuth(session: install.session(appConfiguration))

        let player = try #require(try await app.bootstrapSession())
        let deviceID = try await app.session.deviceID()
        #expect(player == deviceID.uuidString.lowercased())  // the device user

        var widgetConfiguration = MysticaAuth.configuration(isAppExtension: true)
        widgetConfiguration.storeChangeNotifier = notifier
        let widget = MysticaWidgetAuth(
            session: LatchkeySession(
                configuration: widgetConfiguration, secureStore: install.store, defaults: InMemoryKeyValueStore(),  // UserDefaults of its own
                transport: install.transport, clock: install.clock))
        #expect(try await widget.inventory() != nil)
        #expect(install.transport.requests(to: "auth.mystica.app", "/api/v1/auth/register-device").count == 1)
        #expect(install.transport.requests(to: "api.mystica.app", "/v1/inventory").first?.bearer == "access-1")
    }

    @Test func anEmailJoinsThisPlayerAndNoNetworkSaysSoInsteadOfBlamingTheCredentials() async throws {
        let install = Self.install()
        let app = MysticaAuth(session: install.session(MysticaAuth.configuration(isAppExtension: false)))
        _ = try await app.bootstrapSession()
        try await app.addEmail("ann@example.com", password: "correct horse battery")
        #expect(install.transport.requests(to: "auth.mystica.app", "/api/v1/auth/register").first?.bearer == "access-1")

        let offline = Self.install(offline: true)
        let other = MysticaAuth(session: offline.session(MysticaAuth.configuration(isAppExtension: false)))
        _ = try await other.bootstrapSession()
        let error = await #expect(throws: LatchkeyError.self) { try await other.addEmail("ann@example.com", password: "correct horse battery") }
        #expect(MysticaAuth.message(for: try #require(error)) == "No internet connection.")
    }
}
