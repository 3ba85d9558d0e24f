import Foundation
import LatchkeyClient

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Seed 002, Mystica: instant play with no registration wall. The splash screen bootstraps and, with nobody signed in,
/// registers the device; a player may add an email and password later and keep the same player. The home-screen widget
/// uses the app's session through a shared Keychain access group.
struct MysticaAuth {
    /// The Latchkey server (the seed's `register-device`, `auth/me`, `auth/refresh`, `auth/logout`).
    static let serverURL = URL(string: "https://auth.mystica.app")!
    /// Mystica's own game API (the seed's base `https://api.mystica.app/v1`).
    static let gameAPI = URL(string: "https://api.mystica.app/v1")!
    /// The Keychain Sharing group of the app and its widget (Signing & Capabilities → Keychain Sharing).
    static let accessGroup = "TEAMID.app.mystica.shared"

    /// How the app's and the widget's sessions behave.
    static func configuration(isAppExtension: Bool) -> LatchkeySession.Configuration {
        LatchkeySession.Configuration(
            serverURL: serverURL,
            apiOrigins: [gameAPI],  // the game API is the one origin besides Latchkey that may receive the bearer
            // The widget has UserDefaults of its own: it must not take its missing device-ID mirror for a reinstall.
            isAppExtension: isAppExtension)
    }

    /// "Store tokens in Keychain", in the one item the app and the widget share: with an access group, every write posts
    /// a Darwin notification, so the widget follows the app's sign-ins and sign-outs at once. (A file where there is no
    /// Keychain.)
    static func secureStore() -> any SecureStore {
        #if canImport(Security)
        KeychainStore(service: "app.mystica", accessGroup: accessGroup)
        #else
        FileSecureStore(directory: URL(fileURLWithPath: NSHomeDirectory()).appendingPathComponent(".mystica"))
        #endif
    }

    /// The app's one session, made at launch.
    static func live() -> MysticaAuth {
        MysticaAuth(session: LatchkeySession(configuration: configuration(isAppExtension: false), secureStore: secureStore()))
    }

    let session: LatchkeySession

    /// `SplashScreenView`'s `.task`: restore → `auth/me` → refresh once on 401, else register the device (zero friction).
    /// Returns the player's ID, or `nil` while the Keychain is locked (not signed out: the splash waits for the unlock).
    func bootstrapSession() async throws -> String? {
        switch await session.bootstrap() {
        case .signedIn(let current): return current.userID
        case .storeUnavailable: return nil
        case .signedOut, .restoring: return try await session.registerDevice().userID
        }
    }

    /// The root view's `.task` (iOS): revalidate when the game comes back to the foreground, finish refreshes in a
    /// background task, bootstrap again once a locked Keychain opens.
    func followAppLifecycle() async {
        #if canImport(UIKit)
        await session.followAppLifecycle()
        #endif
    }

    /// The player's inventory from the game API; a 401 refreshes once (single-flight) and retries, never in a loop.
    func inventory() async throws -> Data {
        let request = URLRequest(url: Self.gameAPI.appendingPathComponent("inventory"))
        let (data, response) = try await session.data(for: request, policy: .bearer)
        guard response.statusCode == 200 else { throw MysticaAPIError(status: response.statusCode) }
        return data
    }

    /// Settings → "Save your progress": the email and password join this device's player (same ID, same progress); the
    /// mail's 6-digit code verifies the address.
    func addEmail(_ email: String, password: String) async throws {
        try await session.register(email: email, password: password)
    }

    /// The code from the mail.
    func verifyEmail(code: String) async throws {
        try await session.verifyEmail(code: code)
    }

    /// Settings → Logout. The device identity stays, so "Play" later returns the same player.
    func logout() async throws {
        try await session.signOut()
    }

    /// "Error messages are concise and user-friendly (no stack traces or 'error: 401')"; airplane mode is "No internet
    /// connection", never "Invalid credentials".
    static func message(for error: any Error) -> String {
        guard let error = error as? LatchkeyError else { return "Something went wrong. Try again." }
        switch error {
        case .offline:
            return "No internet connection."
        case .sessionExpired, .notSignedIn:
            return "Session expired. Tap Play to continue."
        case .rejected(let details) where details.code == .weakPassword:
            return error.localizedDescription  // names the rule the password broke
        case .rejected(let details) where details.code == .emailTaken:
            return "Email already registered."
        case .rateLimited(let info):
            return "Too many tries. \(info)"
        case .storeUnavailable(let problem):
            return problem.description
        case .rejected, .server, .connectionRefused, .invalidRequest, .mfaRequired:
            return error.localizedDescription
        }
    }
}

/// The home-screen widget: the app's session from the shared Keychain item, never a registration of its own.
struct MysticaWidgetAuth {
    let session: LatchkeySession

    /// The widget's session over the app's Keychain item.
    static func live() -> MysticaWidgetAuth {
        MysticaWidgetAuth(
            session: LatchkeySession(configuration: MysticaAuth.configuration(isAppExtension: true), secureStore: MysticaAuth.secureStore()))
    }

    /// The timeline provider's entry: the player's inventory, or `nil` ("Open Mystica to play") when the app has no
    /// player signed in. The widget never registers a device: the app owns the identity.
    func inventory() async throws -> Data? {
        guard await session.bootstrap().isSignedIn else { return nil }
        return try await MysticaAuth(session: session).inventory()
    }
}

/// An error status from Mystica's own game API.
struct MysticaAPIError: Error, Equatable {
    var status: Int
}
