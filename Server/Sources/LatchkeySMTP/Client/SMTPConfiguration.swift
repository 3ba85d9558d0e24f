/// Where and how ``SMTPClient`` delivers mail: the relay, TLS, credentials and timeouts.
///
/// The description (and `dump`, `String(reflecting:)`) never shows the password.
public struct SMTPConfiguration: Sendable, CustomStringConvertible {
    /// How the connection is encrypted.
    public struct TLSMode: Sendable, Hashable, CustomStringConvertible {
        private enum Base: String, Sendable, Hashable {
            case none
            case startTLS = "STARTTLS"
            case implicit = "implicit TLS"
        }
        private let base: Base

        /// Plain text throughout (a local relay or a test server only: credentials would travel in the clear).
        public static let none = TLSMode(base: .none)
        /// Plain text upgraded with STARTTLS before anything else (RFC 3207); required: delivery fails when the server
        /// does not offer it. Usually port 587.
        public static let startTLS = TLSMode(base: .startTLS)
        /// TLS from the first byte (RFC 8314). Usually port 465.
        public static let implicit = TLSMode(base: .implicit)

        public var description: String { self.base.rawValue }

        /// The port this mode usually runs on: 25, 587 or 465.
        public var defaultPort: Int {
            switch self.base {
            case .none: 25
            case .startTLS: 587
            case .implicit: 465
            }
        }
    }

    /// The relay's host name or IP address. The server's certificate must match it: a name in its subject alternative
    /// names, or for an IP address, the address among its IP subject alternative names.
    public var host: String
    /// The relay's port.
    public var port: Int
    /// How the connection is encrypted.
    public var tls: TLSMode
    /// Which certificate authorities the server's certificate may chain to.
    public var trustRoots: TrustRoots
    /// The account to authenticate as (AUTH PLAIN, or AUTH LOGIN when the server offers only that); nil for none.
    public var credentials: Credentials?
    /// The name this client gives in EHLO/HELO: the sending host's fully qualified domain name (some relays refuse
    /// `localhost`).
    public var heloName: String
    /// How long a command may wait for its reply (and the connection attempt for the connection).
    public var commandTimeout: Duration
    /// How long a whole delivery may take, from connecting to the reply to the message.
    public var totalTimeout: Duration

    /// A configuration; `port` defaults to the TLS mode's usual port.
    ///
    /// The default timeouts (30 s per command, 2 minutes in all) are far shorter than RFC 5321 §4.5.3.2's minutes
    /// per command: they suit a relay that answers at once, and a sender whose mail (a sign-in code) is useless late.
    public init(
        host: String,
        port: Int? = nil,
        tls: TLSMode,
        credentials: Credentials? = nil,
        heloName: String = "localhost",
        trustRoots: TrustRoots = .system,
        commandTimeout: Duration = .seconds(30),
        totalTimeout: Duration = .seconds(120)
    ) {
        self.host = host
        self.port = port ?? tls.defaultPort
        self.tls = tls
        self.trustRoots = trustRoots
        self.credentials = credentials
        self.heloName = heloName
        self.commandTimeout = commandTimeout
        self.totalTimeout = totalTimeout
    }

    public var description: String {
        "SMTPConfiguration(\(self.host):\(self.port), tls: \(self.tls), trust: \(self.trustRoots), "
            + "credentials: \(self.credentials.map(String.init(describing:)) ?? "none"), helo: \(self.heloName), "
            + "timeouts: \(self.commandTimeout) per command, \(self.totalTimeout) in all)"
    }
}
