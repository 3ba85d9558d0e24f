import Configuration
import Foundation

/// The admin console (`admin.*`): off unless `admin.enabled`.
///
/// - `admin.enabled` (default false): serve the console under `/admin`.
/// - `admin.port`: serve it on this port only (on `host`), not on the API's port, so it can be firewalled apart.
/// - `admin.public-url`: the console's address in the setup links `latchkey admin create` prints (default: the public
///   URL, or `http://<host>:<admin.port>` with a port of its own).
/// - `admin.idle-timeout` (seconds, default 1800): a console session unused this long ends.
/// - `admin.session-lifetime` (seconds, default 43200): a session ends this long after sign-in however it is used.
/// - `admin.secure-cookies` (default: true when the console's URL is https): the session cookie is `Secure`.
/// - `admin.require-mfa` (default true): an admin without a confirmed TOTP factor is sent to enrol one right after the
///   password and can do nothing else until done; false: such an admin uses the console and may enrol from the account page.
public struct AdminConfiguration: Sendable {
    public var enabled = false
    public var port: Int?
    public var publicURL: String?
    public var idleTimeout: TimeInterval = 1800
    public var sessionLifetime: TimeInterval = 43_200
    public var secureCookies: Bool?
    public var requireMFA = true

    public init() {}

    init(reader: ConfigReader) {
        let defaults = Self()
        self.enabled = reader.bool(forKey: "enabled", default: defaults.enabled)
        self.port = reader.int(forKey: "port")
        self.publicURL = reader.string(forKey: "public-url").flatMap { $0.isEmpty ? nil : $0 }
        self.idleTimeout = reader.double(forKey: "idle-timeout", default: defaults.idleTimeout)
        self.sessionLifetime = reader.double(forKey: "session-lifetime", default: defaults.sessionLifetime)
        self.secureCookies = reader.bool(forKey: "secure-cookies")
        self.requireMFA = reader.bool(forKey: "require-mfa", default: defaults.requireMFA)
    }

    /// What is wrong with these settings.
    var problems: [String] {
        var problems: [String] = []
        if let port = self.port, !(1...65_535).contains(port) { problems.append("admin.port must be 1 to 65535") }
        if !(60...86_400).contains(self.idleTimeout) { problems.append("admin.idle-timeout must be 60 to 86400 seconds") }
        if !(300...604_800).contains(self.sessionLifetime) { problems.append("admin.session-lifetime must be 300 to 604800 seconds") }
        if let url = self.publicURL, URL(string: url)?.host == nil { problems.append("admin.public-url must be an absolute URL") }
        return problems
    }
}
