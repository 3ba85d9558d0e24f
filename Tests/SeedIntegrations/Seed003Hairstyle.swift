import Foundation
import LatchkeyClient

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Seed 003, the hairstyle app: "Continue as Guest" gives a 15-minute token without refresh, kept in the Keychain and
/// restored at launch while it has more than the 5-minute clock-skew buffer left. Guests send `X-Device-ID` beside the
/// bearer (signed-in users do not), are allowed 5 edits a day per device, and a 429's rate-limit headers become the
/// "Daily Limit Reached" message.
struct HairstyleAuth {
    /// The Latchkey server (guest tokens).
    static let serverURL = URL(string: "https://auth.hairstyle.example")!
    /// The app's own API, whose edit route is metered (5 a day per guest device).
    static let apiURL = URL(string: "https://api.hairstyle.example")!

    /// How the session behaves.
    static var configuration: LatchkeySession.Configuration {
        LatchkeySession.Configuration(
            serverURL: serverURL,
            apiOrigins: [apiURL],  // the hairstyle API is the one origin besides Latchkey that may receive the bearer
            // "5-minute buffer when checking expiration locally" (the default, spelled out for the seed).
            clockSkew: 5 * 60)
    }

    /// "Guest tokens ARE stored": in the Keychain; a file where there is none.
    static func secureStore() -> any SecureStore {
        #if canImport(Security)
        KeychainStore(service: "com.example.hairstyle")
        #else
        FileSecureStore(directory: URL(fileURLWithPath: NSHomeDirectory()).appendingPathComponent(".hairstyle"))
        #endif
    }

    /// The app's one session, made at launch.
    static func live() -> HairstyleAuth {
        HairstyleAuth(session: LatchkeySession(configuration: configuration, secureStore: secureStore()))
    }

    let session: LatchkeySession

    /// What the first screen shows.
    enum Screen: Equatable {
        /// A restored guest (or user) session: the editor.
        case editor
        /// The auth screen with "Continue as Guest"; `notice` says why when a session just ended.
        case auth(notice: String?)
        /// The Keychain is locked: not signed out, bootstrap again on unlock.
        case waitForUnlock
    }

    /// `checkExistingAuth()`: restore a token that is not about to expire; an expired guest token is cleared, and the
    /// guest taps "Continue as Guest" again.
    func launch() async -> Screen {
        switch await session.bootstrap() {
        case .signedIn: .editor
        case .signedOut(reason: .sessionExpired?): .auth(notice: "Your guest session has ended. Continue as guest to keep editing.")
        case .signedOut, .restoring: .auth(notice: nil)
        case .storeUnavailable: .waitForUnlock
        }
    }

    /// `sceneDidBecomeActive`'s token check (iOS): revalidate when the app comes back to the foreground.
    func followAppLifecycle() async {
        #if canImport(UIKit)
        await session.followAppLifecycle()
        #endif
    }

    /// "Continue as Guest": a new guest token (the device's edit count is not reset by it); returns the edits a day a
    /// guest gets, for the banner.
    func continueAsGuest() async throws -> Int? {
        try await session.continueAsGuest().maxActionsPerDay
    }

    /// What an edit ended in.
    enum EditResult: Equatable {
        /// The edited image.
        case edited(Data)
        /// "Daily Limit Reached", with the message to show.
        case dailyLimitReached(String)
    }

    /// One hairstyle edit: the bearer, plus `X-Device-ID` while the session is a guest's (`.deviceIDForGuests`; the API
    /// answers 400 without it). A 429 is not an error here: its headers make the message.
    func edit(photo: Data) async throws -> EditResult {
        var request = URLRequest(url: Self.apiURL.appendingPathComponent("api/v1/hairstyles/edit"))
        request.httpMethod = "POST"
        request.setValue("image/jpeg", forHTTPHeaderField: "Content-Type")
        request.httpBody = photo
        let (data, response) = try await session.data(for: request, policy: .deviceIDForGuests)
        switch response.statusCode {
        case 200: return .edited(data)
        case 429: return .dailyLimitReached(Self.dailyLimitMessage(RateLimitInfo(response: response) ?? RateLimitInfo()))
        default: throw HairstyleAPIError(status: response.statusCode)
        }
    }

    /// "You've reached your daily limit of 5 hairstyle edits. Try again in 3 hours." from `X-RateLimit-Limit` and
    /// `Retry-After` (``RateLimitInfo``'s description is the "Try again in …" sentence).
    static func dailyLimitMessage(_ info: RateLimitInfo) -> String {
        "You've reached your daily limit of \(info.limit ?? 5) hairstyle edits. \(info)"
    }

    /// What the editor says when a call fails.
    static func message(for error: any Error) -> String {
        guard let error = error as? LatchkeyError else { return "An unknown error occurred." }
        switch error {
        case .notSignedIn, .sessionExpired:
            return "Your session has expired. Please sign in again."
        case .rateLimited(let info):
            return dailyLimitMessage(info)
        case .offline:
            return "No internet connection."
        case .rejected, .server, .connectionRefused, .storeUnavailable, .invalidRequest, .mfaRequired:
            return error.localizedDescription
        }
    }
}

/// An error status from the app's own API.
struct HairstyleAPIError: Error, Equatable {
    var status: Int
}
