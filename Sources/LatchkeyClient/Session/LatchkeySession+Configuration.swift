import Foundation

extension LatchkeySession {
    /// Supplies the bearer from an identity provider's own SDK (seed 004: Clerk's `session.getToken()`).
    ///
    /// `forceRefresh` is `true` when the server rejected the previous token; return a fresh one, or `nil` when
    /// the user is signed out of the provider. Requests that meet the same rejection share one forced call.
    public typealias TokenProvider = @Sendable (_ forceRefresh: Bool) async throws -> String?

    /// What happens to session tokens when the app was reinstalled (the Keychain survives, UserDefaults does not).
    public enum ReinstallPolicy: Sendable, Equatable {
        /// Drop the session tokens, keep the device UUID and device key (default): a reinstall signs out
        /// but ``LatchkeySession/registerDevice()`` gets the same account back.
        case dropSession
        /// Keep everything.
        case keepSession
    }

    /// What ``LatchkeySession/registerDevice()`` does on a phone restored from a backup: UserDefaults brought the device
    /// UUID back, the `ThisDeviceOnly` Keychain item with the device's key did not, and the server knows that UUID as the
    /// original phone's (`invalid_device_secret`).
    public enum RestoredDevicePolicy: Sendable, Equatable {
        /// Start a new device identity and register it (default), with ``LatchkeyEvent/deviceIdentityReplaced(_:)``
        /// (``DeviceIdentityChange/restoredFromBackup``): a new device user; accounts linked to Apple or another
        /// provider sign in again with it. The original phone keeps its account.
        case startNewIdentity
        /// Throw ``LatchkeyError/rejected(_:)`` `invalid_device_secret` and let the app decide (an access code, or
        /// ``LatchkeySession/resetDeviceIdentity()``).
        case reportError
    }

    /// How a session behaves.
    public struct Configuration: Sendable {
        /// Where the Latchkey server is: its root, e.g. `https://auth.example.com`, to which the SDK adds `/api/v1/…`.
        ///
        /// A path is honoured:
        /// - one ending in `/api/v1` or `/v1` is the API's own base, and the SDK's `/api/v1/…` paths go below it as they are
        ///   (`http://localhost:3000/api/v1` → `http://localhost:3000/api/v1/auth/refresh`, and a proxy that serves the
        ///   API at `https://api.example.com/v1` → `https://api.example.com/v1/auth/refresh`), never doubled;
        /// - any other is the prefix the server is mounted under behind a proxy (`https://example.com/auth` →
        ///   `https://example.com/auth/api/v1/auth/refresh`).
        ///
        /// Paths outside `/api/v1` (such as `/.well-known/…`) go below the root: the base without its `/api/v1` or `/v1`.
        public var serverURL: URL
        /// The origins of the app's own API (scheme, host and port; a path is ignored), where ``LatchkeySession/data(for:policy:)``,
        /// ``LatchkeySession/bytes(for:policy:)`` and ``LatchkeySession/authorize(_:policy:)`` may send credentials. The
        /// Latchkey server's own origin is always included.
        ///
        /// A policy other than ``AuthPolicy/none`` to any other origin throws ``LatchkeyError/invalidRequest(_:)`` before
        /// anything is sent (an avatar on a CDN must not get the access token), as does one to a listed origin over plain
        /// `http` unless its host is a loopback one (`localhost`, 127.0.0.0/8, `::1`). Origins compare as browsers do:
        /// scheme and host case-insensitively, a missing port as the scheme's default, hosts whole. A `wss` URL has its
        /// `https` twin's origin, so ``LatchkeySession/authorize(_:policy:)`` may put `?token=` on a WebSocket to a listed
        /// origin.
        public var apiOrigins: [URL]
        /// A token that expires within this many seconds is treated as expired (clock-skew buffer, default 5 minutes).
        public var clockSkew: TimeInterval
        /// Whether an access code whose `sub` is not this device's UUID is refused (default `true`, the Stori rule).
        public var requireAccessCodeForThisDevice: Bool
        /// What a reinstall does to session tokens.
        public var reinstallPolicy: ReinstallPolicy
        /// What registering a device restored from a backup does.
        public var restoredDevicePolicy: RestoredDevicePolicy
        /// When set, bearers come from this provider instead of stored tokens.
        public var tokenProvider: TokenProvider?
        /// The UserDefaults key that mirrors the device UUID.
        public var deviceIDDefaultsKey: String
        /// Whether the device proves itself with a ``DeviceKey`` (DPoP, RFC 9449; default `true`): no device secret
        /// travels, and refresh tokens are bound to the key. `false` registers with a device secret, as SDKs before
        /// device keys did (servers accept both unless they require proofs).
        public var usesDeviceKey: Bool
        /// Whether this process is an app extension (a widget, a share extension; by default, whether the main bundle is
        /// an `.appex`). An extension shares the app's Keychain item (``KeychainStore`` with an access group) but has
        /// UserDefaults of its own, so it never takes a missing device-ID mirror for a reinstall.
        public var isAppExtension: Bool
        /// What keeps the app running while a refresh finishes; `nil` (default) until
        /// `LatchkeySession/followAppLifecycle()` installs UIKit's background tasks on iOS.
        public var backgroundExecution: (any BackgroundExecution)?
        /// How long ``LatchkeySession/liveEvents()`` waits before connecting again after a drop.
        public var liveEventsReconnect: ReconnectPolicy
        /// What tells the other processes sharing the secure store (an app and its extensions) about this session's
        /// writes, and this session about theirs: after a sign-in, refresh or sign-out in one, the others take the stored
        /// session (see ``StoreChangeNotifier``). `nil` (default): a `DarwinStoreChangeNotifier` on Apple platforms when
        /// the store is a ``KeychainStore`` with an access group, otherwise none.
        public var storeChangeNotifier: (any StoreChangeNotifier)?
        /// Where App Attest evidence comes from; `nil` (default): none is sent. With a provider,
        /// ``LatchkeySession/registerDevice()`` and ``LatchkeySession/continueAsGuest()`` prove that this is a genuine copy of
        /// the app on a real Apple device, as the server's `app-attest.policy` asks (see ``AppAttestProvider``).
        public var appAttest: AppAttestProvider?

        /// Creates a configuration; only the server URL is required.
        public init(
            serverURL: URL, apiOrigins: [URL] = [], clockSkew: TimeInterval = 300, requireAccessCodeForThisDevice: Bool = true,
            reinstallPolicy: ReinstallPolicy = .dropSession, tokenProvider: TokenProvider? = nil,
            deviceIDDefaultsKey: String = "latchkey.device-id", usesDeviceKey: Bool = true,
            isAppExtension: Bool = Configuration.runsInAppExtension, restoredDevicePolicy: RestoredDevicePolicy = .startNewIdentity,
            backgroundExecution: (any BackgroundExecution)? = nil, liveEventsReconnect: ReconnectPolicy = ReconnectPolicy(),
            storeChangeNotifier: (any StoreChangeNotifier)? = nil, appAttest: AppAttestProvider? = nil
        ) {
            self.serverURL = serverURL
            self.apiOrigins = apiOrigins
            self.clockSkew = clockSkew
            self.requireAccessCodeForThisDevice = requireAccessCodeForThisDevice
            self.reinstallPolicy = reinstallPolicy
            self.tokenProvider = tokenProvider
            self.deviceIDDefaultsKey = deviceIDDefaultsKey
            self.usesDeviceKey = usesDeviceKey
            self.isAppExtension = isAppExtension
            self.restoredDevicePolicy = restoredDevicePolicy
            self.backgroundExecution = backgroundExecution
            self.liveEventsReconnect = liveEventsReconnect
            self.storeChangeNotifier = storeChangeNotifier
            self.appAttest = appAttest
        }

        /// Whether this process runs from an app extension bundle (`.appex`).
        public static var runsInAppExtension: Bool { Bundle.main.bundleURL.pathExtension == "appex" }
    }
}
