import Foundation
import LatchkeyClient

/// Seed 001, Photolala: Sign in with Apple is the only way in ("no traditional login"), the server maps the Apple ID to
/// Photolala's own user UUID (the same one on every return), and S3 is reached with short-lived credentials that only open
/// `users/<user id>/`.
///
/// There is no anonymous device user: a launch without a session, a first launch or one after a reinstall alike, offers
/// Sign in with Apple and nothing else, and never calls `registerDevice()`.
struct PhotolalaAuth {
    /// The Latchkey server: Apple sign-in and the S3 credentials.
    static let serverURL = URL(string: "https://auth.photolala.example")!

    /// How the session behaves.
    static var configuration: LatchkeySession.Configuration {
        // No apiOrigins: Photolala has no API of its own: Latchkey (always included) issues the S3 credentials, and S3
        // requests are signed with those, never sent the bearer.
        LatchkeySession.Configuration(serverURL: serverURL)
    }

    /// The Keychain on Apple platforms; a file where there is none.
    static func secureStore() -> any SecureStore {
        #if canImport(Security)
        KeychainStore(service: "com.photolala.app")
        #else
        FileSecureStore(directory: URL(fileURLWithPath: NSHomeDirectory()).appendingPathComponent(".photolala"))
        #endif
    }

    /// The app's one session, made at launch.
    static func live() -> PhotolalaAuth {
        PhotolalaAuth(session: LatchkeySession(configuration: configuration, secureStore: secureStore()))
    }

    let session: LatchkeySession

    /// What the first screen shows.
    enum Screen: Equatable {
        /// "Returning user flow": the library.
        case library(userID: String)
        /// "First time user flow" (and after a reinstall or a sign-out): the Sign in with Apple button, alone.
        case signInWithApple
        /// The Keychain is locked (launched before the first unlock): not signed out, bootstrap again on unlock.
        case waitForUnlock
    }

    /// Launch: restore the session, else offer Sign in with Apple. Never `registerDevice()`: on a reinstall the Keychain's
    /// session is dropped (`reinstallPolicy` `.dropSession`), and a device user made then would be an empty account the
    /// Apple ID is not linked to.
    func launch() async -> Screen {
        switch await session.bootstrap() {
        case .signedIn(let current): .library(userID: current.userID)
        case .storeUnavailable: .waitForUnlock
        case .signedOut, .restoring: .signInWithApple
        }
    }

    /// One Sign in with Apple attempt: put ``nonce``'s `sha256` in `ASAuthorizationAppleIDRequest.nonce`, then pass the
    /// credential here.
    struct AppleAttempt {
        /// A new nonce for every attempt (Latchkey gets the raw one, Apple its hash).
        let nonce = AppleNonce.random()
    }

    /// "Backend validates, maps Apple's `sub` to our user UUID": `identityToken` and `authorizationCode` are the
    /// `ASAuthorizationAppleIDCredential`'s. `linkingCurrentUser: false`: Photolala's users are Apple IDs, never a device
    /// user with Apple attached.
    func signIn(_ attempt: AppleAttempt, identityToken: Data, authorizationCode: Data?) async throws -> Screen {
        let signedIn = try await session.signInWithApple(
            identityToken: identityToken, rawNonce: attempt.nonce.raw, authorizationCode: authorizationCode, linkingCurrentUser: false)
        return .library(userID: signedIn.userID)
    }

    /// "STS locks to user folder": the key of a photo in this user's folder, and the credentials that reach it (kept in
    /// memory and renewed 5 minutes before they expire, as the seed's `TokenManager` does by hand).
    func uploadTarget(md5: String) async throws -> (credentials: StorageCredentials, key: String) {
        let credentials = try await session.storageCredentials()
        return (credentials, credentials.prefix + "photos/\(md5).dat")
    }

    /// What the sign-in screen says when Sign in with Apple or S3 fails.
    static func message(for error: any Error) -> String {
        guard let error = error as? LatchkeyError else { return "Something went wrong. Try again." }
        switch error {
        case .rejected(let details) where details.code == .signInRejected:
            return "Apple's sign-in was not accepted. Please try again."
        case .notSignedIn, .sessionExpired:
            return "Please sign in with Apple again."
        case .offline:
            return "You are offline. Photolala needs a connection to sign in and upload."
        case .rateLimited(let info):
            return "Too many attempts. \(info)"
        case .rejected, .server, .connectionRefused, .storeUnavailable, .invalidRequest, .mfaRequired:
            return error.localizedDescription
        }
    }
}
