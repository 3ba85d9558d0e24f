import Foundation
import LatchkeyClient

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Seed 000, Stori Composer: one device UUID everywhere. The app registers that UUID as a user (no JWT), support issues
/// an access code for it (a JWT whose `sub` is the UUID), Composer calls carry the JWT only, and asset calls carry the
/// UUID only (`X-Device-ID`), never the JWT.
///
/// Latchkey stands in for the seed's `users/register` and `validate-token`; Composer is Stori's own backend.
struct StoriAuth {
    /// The Latchkey server.
    static let serverURL = URL(string: "https://auth.stori.example")!
    /// Stori's own backend: compose, conversations, MCP, assets.
    static let composerURL = URL(string: "https://composer.stori.example")!

    /// How the session behaves.
    static var configuration: LatchkeySession.Configuration {
        LatchkeySession.Configuration(
            serverURL: serverURL,
            apiOrigins: [composerURL],  // Composer is the one origin besides Latchkey that may receive the JWT
            // §3.4: an access code whose `sub` is not this device's UUID is refused (the default, spelled out for the seed).
            requireAccessCodeForThisDevice: true)
    }

    /// §3.3: the access code lives in the Keychain (its item survives a reinstall, and the device UUID with it); a file
    /// where there is no Keychain.
    static func secureStore() -> any SecureStore {
        #if canImport(Security)
        KeychainStore(service: "app.stori.composer")
        #else
        FileSecureStore(directory: URL(fileURLWithPath: NSHomeDirectory()).appendingPathComponent(".stori"))
        #endif
    }

    /// The app's one session, made at launch.
    static func live() -> StoriAuth {
        StoriAuth(session: LatchkeySession(configuration: configuration, secureStore: secureStore()))
    }

    let session: LatchkeySession

    /// What the first screen shows.
    enum Screen: Equatable {
        /// A stored access code is still good: Composer.
        case composer
        /// No code (or it expired): ask for one, showing the device UUID support issues it for.
        case accessCode(deviceID: UUID)
        /// The Keychain or the server cannot be used now; the sentence says why.
        case tryAgainLater(String)
    }

    /// §2: restore the stored code, else make sure the backend has a user for this device UUID (idempotent, no JWT) before
    /// support issues a code for it.
    func launch() async -> Screen {
        switch await session.bootstrap() {
        case .signedIn: return .composer
        case .storeUnavailable(let problem): return .tryAgainLater(problem.description)
        case .signedOut, .restoring:
            do {
                try await session.registerUser()
                return .accessCode(deviceID: try await session.deviceID())
            } catch {
                return .tryAgainLater(Self.message(for: error))
            }
        }
    }

    /// §3: the pasted code is checked with `validate-token`, refused unless its `sub` is this device, then kept as the bearer.
    func redeem(_ code: String) async throws {
        try await session.redeemAccessCode(code)
    }

    /// §4: `POST /api/v1/compose/stream` with the JWT only; the server-sent events' data, as they arrive.
    func compose(_ prompt: String) async throws -> [String] {
        var request = URLRequest(url: Self.composerURL.appendingPathComponent("api/v1/compose/stream"))
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = try JSONEncoder().encode(["prompt": prompt])
        let (bytes, response) = try await session.bytes(for: request, policy: .bearer)
        guard response.statusCode == 200 else { throw StoriAPIError(status: response.statusCode) }
        var events: [String] = []
        for try await line in bytes.lines where line.hasPrefix("data: ") { events.append(String(line.dropFirst("data: ".count))) }
        return events
    }

    /// §4's "common mistake": asset requests carry `X-Device-ID` only, never the JWT (`.deviceID` removes any
    /// `Authorization` and reads the UUID from the UserDefaults mirror, not the Keychain).
    func drumKits() async throws -> Data {
        let request = URLRequest(url: Self.composerURL.appendingPathComponent("api/v1/assets/drum-kits"))
        let (data, response) = try await session.data(for: request, policy: .deviceID)
        guard response.statusCode == 200 else { throw StoriAPIError(status: response.statusCode) }
        return data
    }

    /// §4: the MCP WebSocket takes the token in its query (`?token=`), no header.
    func mcpSocketRequest() async throws -> URLRequest {
        var request = URLRequest(url: URL(string: "wss://composer.stori.example/api/v1/mcp/daw")!)
        try await session.authorize(&request, policy: .tokenInQuery)
        return request
    }

    /// What the access-code screen and Composer say when a call fails.
    static func message(for error: any Error) -> String {
        guard let error = error as? LatchkeyError else { return "Something went wrong. Try again." }
        switch error {
        case .rejected(let details) where details.code == .accessCodeForAnotherDevice:
            return "This access code was issued for another device. Ask support for a code for this one."
        case .rejected(let details) where details.code == .invalidAccessCode:
            return "This access code is not valid or has expired."
        case .sessionExpired, .notSignedIn:
            return "Your access code has expired. Enter a new one."
        case .offline:
            return "You are offline. Composer needs a connection."
        case .rateLimited(let info):
            return "Too many requests. \(info)"
        case .rejected, .server, .connectionRefused, .storeUnavailable, .invalidRequest, .mfaRequired:
            return error.localizedDescription
        }
    }
}

/// An error status from Stori's own backend (its errors are the app's, not the SDK's).
struct StoriAPIError: Error, Equatable {
    var status: Int
}
