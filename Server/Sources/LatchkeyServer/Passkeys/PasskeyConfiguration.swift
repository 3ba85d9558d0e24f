import Configuration
import Foundation

/// Passkeys (`passkeys.*`, and `limits.passkeys`).
///
/// - `passkeys.rp-id`: the relying party ID, the domain passkeys are made for (`example.com`); unset, passkeys are off and
///   every passkey route answers 404 `passkeys_disabled`
/// - `passkeys.rp-name`: the name an authenticator shows beside the passkey (default `email.app-name`, itself `Latchkey`)
/// - `passkeys.origins`: the `clientDataJSON.origin` values accepted (default `https://<rp-id>`)
/// - `passkeys.apple-app-ids`: `TEAMID.bundle.id` of the apps whose passkeys are the site's (the AASA's `webcredentials`)
/// - `passkeys.user-verification`: `required` (default) or `preferred`
/// - `passkeys.challenge-lifetime`: seconds a ceremony's challenge may be answered (300)
/// - `passkeys.timeout`: seconds the options tell the authenticator to wait (300; sent in milliseconds)
/// - `limits.passkeys.limit`/`.window`: the options routes and sign-ins together per client IP (60 per 300 s; 0 is off)
public struct PasskeyConfiguration: Sendable, Equatable {
    /// Whether an assertion without user verification (no Face ID, no PIN) is refused or let in as one factor.
    public enum UserVerification: String, Sendable, Equatable {
        case required
        case preferred
    }

    public var rpID: String?
    /// The name authenticators show; nil: `email.app-name`.
    public var rpName: String?
    /// Accepted origins; empty: `https://<rp-id>`.
    public var origins: [String] = []
    public var appleAppIDs: [String] = []
    public var userVerification = UserVerification.required
    public var challengeLifetime: TimeInterval = 300
    public var timeout: TimeInterval = 300
    /// Options and sign-ins per client IP.
    public var limit = RateLimitPolicy(name: "passkeys", limit: 60, window: 300)
    /// Values that could not be read (``problems`` lists them).
    private var unreadable: [String] = []

    public init() {}

    init(reader: ConfigReader, limits: ConfigReader) {
        let defaults = Self()
        self.rpID = reader.string(forKey: "rp-id")
        self.rpName = reader.string(forKey: "rp-name")
        self.origins = reader.stringArray(forKey: "origins", default: [])
        self.appleAppIDs = reader.stringArray(forKey: "apple-app-ids", default: [])
        let verification = reader.string(forKey: "user-verification", default: defaults.userVerification.rawValue)
        if let value = UserVerification(rawValue: verification) {
            self.userVerification = value
        } else {
            self.unreadable.append("passkeys.user-verification must be required or preferred, not \"\(verification)\"")
        }
        self.challengeLifetime = reader.double(forKey: "challenge-lifetime", default: defaults.challengeLifetime)
        self.timeout = reader.double(forKey: "timeout", default: defaults.timeout)
        self.limit = defaults.limit.reading(limits)
    }

    /// Passkeys are on once the relying party ID is set.
    public var isEnabled: Bool { self.rpID != nil }

    /// The origins a ceremony's client data may name.
    var allowedOrigins: Set<String> {
        guard let rpID = self.rpID else { return [] }
        return self.origins.isEmpty ? ["https://\(rpID)"] : Set(self.origins)
    }

    /// What is wrong with the settings; the server refuses to start with any.
    var problems: [String] {
        var problems = self.unreadable
        if let rpID = self.rpID, !Self.isDomain(rpID) {
            problems.append(
                "passkeys.rp-id must be a lowercase domain such as example.com or localhost (no scheme, port or path), not \"\(rpID)\"")
        }
        for origin in self.origins where !Self.isOrigin(origin) {
            problems.append(
                "passkeys.origins: \"\(origin)\" is not an origin: write https://host[:port] (http only for localhost), or android:apk-key-hash:…")
        }
        for app in self.appleAppIDs where !Self.isAppleAppID(app) {
            problems.append("passkeys.apple-app-ids: \"\(app)\" is not TEAMID.bundle.id (a 10-character team ID, a dot, the bundle ID)")
        }
        if !(self.challengeLifetime > 0 && self.challengeLifetime.isFinite) {
            problems.append("passkeys.challenge-lifetime must be a number of seconds above 0")
        }
        if !(self.timeout > 0 && self.timeout <= 86_400) { problems.append("passkeys.timeout must be 1 to 86400 seconds") }
        return problems
    }

    private static func isDomain(_ text: String) -> Bool {
        let labels = text.split(separator: ".", omittingEmptySubsequences: false)
        return text.count <= 253
            && labels.allSatisfy { label in
                !label.isEmpty && label.count <= 63 && label.first != "-" && label.last != "-"
                    && label.allSatisfy { $0.isASCII && ($0.isLowercase || $0.isNumber || $0 == "-") }
            }
    }

    private static func isOrigin(_ text: String) -> Bool {
        if text.hasPrefix("android:apk-key-hash:") { return text.count > "android:apk-key-hash:".count }
        guard let url = URLComponents(string: text), let scheme = url.scheme, let host = url.host, !host.isEmpty, url.path.isEmpty,
            url.query == nil, url.fragment == nil, url.user == nil
        else { return false }
        return scheme == "https" || (scheme == "http" && host == "localhost")
    }

    private static func isAppleAppID(_ text: String) -> Bool {
        guard let dot = text.firstIndex(of: ".") else { return false }
        let team = text[..<dot]
        let bundle = text[text.index(after: dot)...]
        return team.count == 10 && team.allSatisfy { $0.isASCII && ($0.isUppercase || $0.isNumber) } && !bundle.isEmpty
            && bundle.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "." || $0 == "-") }
    }
}
