import ArgumentParser
import Foundation
import LatchkeyAPI
import LatchkeyClient

/// Options every command takes.
struct DeviceOptions: ParsableArguments {
    @Option(help: "The Latchkey server (env LATCHKEY_SERVER; default http://127.0.0.1:8080).")
    var server: String?

    @Option(
        name: .customLong("api-origin"),
        help: "An origin of the app's own API (scheme, host and port; repeatable) where credentials may go besides the server.")
    var apiOrigins: [String] = []

    @Option(help: "Directory holding this app's state (env LATCHKEY_DEVICE_STATE; default ~/.latchkey-device).")
    var state: String?

    @Flag(help: "Print JSON instead of text.")
    var json = false

    var stateDirectory: URL {
        let path = self.state ?? ProcessInfo.processInfo.environment["LATCHKEY_DEVICE_STATE"]
        if let path { return URL(fileURLWithPath: (path as NSString).expandingTildeInPath) }
        return FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".latchkey-device")
    }

    func validate() throws {
        let server = self.server ?? ProcessInfo.processInfo.environment["LATCHKEY_SERVER"] ?? "http://127.0.0.1:8080"
        guard let url = URL(string: server), url.scheme == "http" || url.scheme == "https", url.host != nil else {
            throw ValidationError("--server must be an http(s) URL, e.g. http://127.0.0.1:8080")
        }
        for origin in self.apiOrigins {
            guard let url = URL(string: origin), url.scheme == "http" || url.scheme == "https", url.host != nil else {
                throw ValidationError("--api-origin must be an http(s) URL, e.g. https://api.example.com (got \(origin))")
            }
        }
    }

    /// The server's base URL.
    var serverURL: URL { URL(string: self.server ?? ProcessInfo.processInfo.environment["LATCHKEY_SERVER"] ?? "http://127.0.0.1:8080")! }

    /// The app's session over the state directory. The device-ID mirror is a file there too (not the platform default,
    /// which would be one for every state directory): each state directory is an install of its own.
    func makeSession(_ configure: (inout LatchkeySession.Configuration) -> Void = { _ in }) -> LatchkeySession {
        let directory = self.stateDirectory
        var configuration = LatchkeySession.Configuration(serverURL: self.serverURL, apiOrigins: self.apiOrigins.compactMap(URL.init(string:)))
        configure(&configuration)
        return LatchkeySession(
            configuration: configuration,
            secureStore: FileSecureStore(directory: directory),
            defaults: FileKeyValueStore(fileURL: directory.appendingPathComponent("defaults.json")),
            webSocketTransport: Self.webSocketTransport)
    }

    /// SwiftNIO's WebSockets on Linux (FoundationNetworking needs a libcurl built with them), `URLSession`'s elsewhere.
    static var webSocketTransport: any WebSocketTransport {
        #if !canImport(Darwin) && canImport(NIOWebSocket)
        NIOWebSocketTransport()
        #else
        URLSessionWebSocketTransport()
        #endif
    }

    /// Runs `body` and turns SDK errors into a message and the documented exit code.
    func run(
        configure: (inout LatchkeySession.Configuration) -> Void = { _ in }, _ body: (LatchkeySession) async throws -> Void
    ) async throws {
        do {
            try await body(self.makeSession(configure))
        } catch LatchkeyError.mfaRequired(let challenge) {
            PendingSignIn(stateDirectory: self.stateDirectory).save(challenge)
            let next = "printf '%s\\n' \"$CODE\" | latchkey-device mfa verify (add --recovery-code for a recovery code) within 5 minutes"
            let error = LatchkeyError.mfaRequired(challenge)
            if self.json {
                let factors = challenge.factors.map { ["id": $0.id, "type": $0.type.rawValue] }
                Output.printJSON(["error": ["code": ErrorCode.mfaRequired.rawValue, "message": error.description], "factors": factors, "next": next])
            } else {
                Output.error("\(error.description) Finish with: \(next)")
            }
            throw ExitCode(Self.exitCode(for: error))
        } catch let error as LatchkeyError {
            if self.json {
                Output.printJSON(["error": ["code": error.code?.rawValue ?? "client_error", "message": error.description]])
            } else {
                Output.error(error.description)
            }
            throw ExitCode(Self.exitCode(for: error))
        }
    }

    /// Refusals that mean "sign in (again)": exit 3, as a 401 is.
    static let signInCodes: Set<ErrorCode?> = [
        .invalidDeviceSecret, .invalidAccessCode, .accessCodeForAnotherDevice, .signInRejected, .reauthenticationRequired, .unknownDevice,
        .invalidCredentials, .emailNotVerified, .invalidMFAToken,
    ]

    static func exitCode(for error: LatchkeyError) -> Int32 {
        switch error {
        case .notSignedIn, .sessionExpired, .mfaRequired: 3
        case .rejected(let details) where details.code == .tooManyAttempts: 4
        case .rejected(let details) where details.status == 401 || Self.signInCodes.contains(details.code): 3
        case .rateLimited: 4
        case .offline, .connectionRefused, .server, .storeUnavailable: 5
        case .rejected: 1
        case .invalidRequest: 2
        }
    }
}

enum Output {
    static func printJSON(_ value: Any) {
        guard let data = try? JSONSerialization.data(withJSONObject: value, options: [.prettyPrinted, .sortedKeys]) else { return }
        Swift.print(String(decoding: data, as: UTF8.self))
    }

    /// Prints `value` as JSON the way the server writes it (snake_case keys, ISO 8601 dates).
    static func printJSON(encoding value: some Encodable) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        guard let data = try? encoder.encode(value) else { return }
        Swift.print(String(decoding: data, as: UTF8.self))
    }

    /// Prints `line` at once, even when stdout is a file or a pipe (which `print` would buffer).
    static func line(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }

    static func error(_ message: String) {
        FileHandle.standardError.write(Data("error: \(message)\n".utf8))
    }

    /// The session as a dictionary (no token).
    static func describe(_ state: AuthState, deviceID: UUID?) -> [String: Any] {
        var result: [String: Any] = ["state": Self.name(of: state)]
        if let deviceID { result["device_id"] = deviceID.uuidString.lowercased() }
        if case .signedIn(let session) = state {
            result["user_id"] = session.userID
            result["kind"] = session.kind.rawValue
            if let expiresAt = session.expiresAt { result["expires_at"] = ISO8601DateFormatter().string(from: expiresAt) }
            if let aal = session.aal { result["aal"] = aal.rawValue }
            if !session.amr.isEmpty { result["amr"] = session.amr.map(\.rawValue) }
        }
        return result
    }

    static func name(of state: AuthState) -> String {
        switch state {
        case .restoring: "restoring"
        case .signedOut(let reason): reason == .sessionExpired ? "session_expired" : "signed_out"
        case .signedIn: "signed_in"
        case .storeUnavailable: "store_unavailable"
        }
    }

    /// Prints `dictionary` as JSON, or as `key: value` lines.
    static func print(_ dictionary: [String: Any], json: Bool) {
        if json { return Self.printJSON(dictionary) }
        for key in dictionary.keys.sorted() { Swift.print("\(key): \(dictionary[key]!)") }
    }
}
