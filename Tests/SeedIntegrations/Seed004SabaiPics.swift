import Foundation
import LatchkeyClient

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Seed 004, SabaiPics Studio: Clerk signs the photographer in (its prebuilt `AuthView`), and Clerk's session token is
/// the bearer of every call to the SabaiPics API. Latchkey stores no token: it asks Clerk before each request
/// (clerk-ios 1.x: `getToken()` returns the JWT as `String?`, and there is no `load()` to call at launch).
struct SabaiPicsAuth {
    /// The Latchkey server, which knows Clerk as an identity provider and names the user behind a Clerk token.
    static let serverURL = URL(string: "https://auth.sabaipics.example")!
    /// The SabaiPics API.
    static let apiURL = URL(string: "https://api.sabaipics.example")!

    /// How the session behaves: every bearer comes from Clerk. `forceRefresh` is `true` after a 401; Clerk then skips
    /// its one-minute token cache.
    static var configuration: LatchkeySession.Configuration {
        LatchkeySession.Configuration(
            serverURL: serverURL,
            apiOrigins: [apiURL],  // the SabaiPics API is the one origin besides Latchkey that may receive Clerk's token
            tokenProvider: { @MainActor forceRefresh in
                try await Clerk.shared.session?.getToken(.init(skipCache: forceRefresh))
            })
    }

    /// Only the device UUID is stored (Clerk keeps its own session): the Keychain, or a file where there is none.
    static func secureStore() -> any SecureStore {
        #if canImport(Security)
        KeychainStore(service: "com.sabaipics.studio")
        #else
        FileSecureStore(directory: URL(fileURLWithPath: NSHomeDirectory()).appendingPathComponent(".sabaipics"))
        #endif
    }

    /// `SabaiPicsStudioApp`'s launch: Clerk with the publishable key from Info.plist (the `.xcconfig` build setting
    /// `CLERK_PUBLISHABLE_KEY`), and the app's one session.
    @MainActor static func live() -> SabaiPicsAuth {
        if let key = Bundle.main.object(forInfoDictionaryKey: "ClerkPublishableKey") as? String {
            Clerk.shared.configure(publishableKey: key)
        }
        return SabaiPicsAuth(session: LatchkeySession(configuration: configuration, secureStore: secureStore()))
    }

    let session: LatchkeySession

    /// What `AuthGateView` shows.
    enum Screen: Equatable {
        /// Signed in: the existing `ContentView` (the PTP flow), for this SabaiPics user.
        case content(userID: String)
        /// Signed out of Clerk (or Clerk's token refused): Clerk's `AuthView`.
        case clerkAuthView
        /// The Keychain is locked: wait for the unlock.
        case waitForUnlock
    }

    /// `AuthGateView`'s first answer. When Clerk or the server cannot be reached, the user the server named last time is
    /// kept; the state never stays at "restoring".
    func launch() async -> Screen {
        switch await session.bootstrap() {
        case .signedIn(let current): .content(userID: current.userID)
        case .signedOut, .restoring: .clerkAuthView
        case .storeUnavailable: .waitForUnlock
        }
    }

    /// `AuthGateView`'s `.task`: each Clerk sign-in, sign-up and sign-out makes the session ask Clerk again (signed out
    /// when Clerk has no session, the next user's state when it has another's).
    func followClerk() async {
        let (changes, continuation) = AsyncStream<Void>.makeStream()
        let forwarding = Task { @MainActor in
            for await _ in Clerk.shared.authEventEmitter.events { continuation.yield() }
            continuation.finish()
        }
        defer { forwarding.cancel() }
        await session.followProviderChanges(changes)
    }

    /// The seed's end-to-end check, `GET /auth/me` on the SabaiPics API with Clerk's token: the backend's user ID.
    func me() async throws -> String {
        let (data, response) = try await session.data(for: URLRequest(url: Self.apiURL.appendingPathComponent("auth/me")), policy: .bearer)
        guard response.statusCode == 200 else { throw SabaiPicsAPIError(status: response.statusCode) }
        return try JSONDecoder().decode(Me.self, from: data).userId
    }

    private struct Me: Decodable {
        var userId: String
    }

    /// What a failed API call shows.
    static func message(for error: any Error) -> String {
        guard let error = error as? LatchkeyError else { return "Something went wrong. Try again." }
        switch error {
        case .notSignedIn, .sessionExpired:
            return "Please sign in again."
        case .offline:
            return "You are offline. Uploads continue when the connection is back."
        case .rateLimited(let info):
            return "Too many requests. \(info)"
        case .rejected, .server, .connectionRefused, .storeUnavailable, .invalidRequest, .mfaRequired:
            return error.localizedDescription
        }
    }
}

/// An error status from the SabaiPics API.
struct SabaiPicsAPIError: Error, Equatable {
    var status: Int
}
