import Foundation

extension LatchkeySession {
    /// Supplies the bearer from an identity provider's own SDK (seed 004: Clerk's `session.getToken()`).
    ///
    /// `forceRefresh` is `true` when the server rejected the previous token; return a fresh one, or `nil` when
    /// the user is signed out of the provider.
    public typealias TokenProvider = @Sendable (_ forceRefresh: Bool) async throws -> String?

    /// What happens to session tokens when the app was reinstalled (the Keychain survives, UserDefaults does not).
    public enum ReinstallPolicy: Sendable, Equatable {
        /// Drop the session tokens, keep the device UUID and device secret (default): a reinstall signs out
        /// but ``LatchkeySession/registerDevice()`` gets the same account back.
        case dropSession
        /// Keep everything.
        case keepSession
    }

    /// How a session behaves.
    public struct Configuration: Sendable {
        /// The server's base URL, e.g. `https://auth.example.com` (the SDK adds `/api/v1/…`).
        public var serverURL: URL
        /// A token that expires within this many seconds is treated as expired (clock-skew buffer, default 5 minutes).
        public var clockSkew: TimeInterval
        /// Whether an access code whose `sub` is not this device's UUID is refused (default `true`, the Stori rule).
        public var requireAccessCodeForThisDevice: Bool
        /// What a reinstall does to session tokens.
        public var reinstallPolicy: ReinstallPolicy
        /// When set, bearers come from this provider instead of stored tokens.
        public var tokenProvider: TokenProvider?
        /// The UserDefaults key that mirrors the device UUID.
        public var deviceIDDefaultsKey: String
        /// Whether the device proves itself with a ``DeviceKey`` (DPoP, RFC 9449; default `true`): no device secret
        /// travels, and refresh tokens are bound to the key. `false` registers with a device secret, as SDKs before
        /// device keys did (servers accept both unless they require proofs).
        public var usesDeviceKey: Bool

        /// Creates a configuration; only the server URL is required.
        public init(
            serverURL: URL, clockSkew: TimeInterval = 300, requireAccessCodeForThisDevice: Bool = true,
            reinstallPolicy: ReinstallPolicy = .dropSession, tokenProvider: TokenProvider? = nil,
            deviceIDDefaultsKey: String = "latchkey.device-id", usesDeviceKey: Bool = true
        ) {
            self.serverURL = serverURL
            self.clockSkew = clockSkew
            self.requireAccessCodeForThisDevice = requireAccessCodeForThisDevice
            self.reinstallPolicy = reinstallPolicy
            self.tokenProvider = tokenProvider
            self.deviceIDDefaultsKey = deviceIDDefaultsKey
            self.usesDeviceKey = usesDeviceKey
        }
    }
}
