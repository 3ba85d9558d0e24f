extension SMTPConfiguration {
    /// A username and password for SMTP AUTH.
    ///
    /// The password is a secret: `description`, `debugDescription` and the mirror (`dump`) show `<redacted>`, and no
    /// ``SMTPError`` contains it or the AUTH payloads that carry it.
    public struct Credentials: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
        /// The account name.
        public var username: String
        /// The password (or an API key, for relays that use one).
        public var password: String

        public init(username: String, password: String) {
            self.username = username
            self.password = password
        }

        public var description: String { "Credentials(username: \(self.username), password: <redacted>)" }
        public var debugDescription: String { self.description }
        public var customMirror: Mirror {
            Mirror(self, children: ["username": self.username, "password": "<redacted>"], displayStyle: .struct)
        }
    }

    /// The certificate authorities a server's certificate may chain to. Verification is never switched off: a test
    /// server's throwaway certificate is trusted by naming its CA here.
    public struct TrustRoots: Sendable, Hashable, CustomStringConvertible {
        enum Base: Sendable, Hashable {
            case system
            case certificateAuthorities(pem: String)
        }
        let base: Base

        /// The operating system's trust store.
        public static let system = TrustRoots(base: .system)

        /// Only the CA certificates in `pem` (one or more `-----BEGIN CERTIFICATE-----` blocks), such as a private
        /// relay's CA or a test server's; the system's roots are then not trusted.
        public static func certificateAuthorities(pem: String) -> TrustRoots {
            TrustRoots(base: .certificateAuthorities(pem: pem))
        }

        public var description: String {
            switch self.base {
            case .system: "system"
            case .certificateAuthorities: "given CA certificates"
            }
        }
    }
}
