import Foundation
import LatchkeyAPI

/// An app's Latchkey session: device identity, tokens, refresh, and every request to the server or the app's own API.
///
/// Create one per app (per process) at launch and call ``bootstrap()``:
///
/// ```swift
/// let session = LatchkeySession(configuration: .init(serverURL: URL(string: "https://auth.example.com")!),
///                               secureStore: KeychainStore(service: "com.example.app"))
/// if case .signedOut = await session.bootstrap() { try await session.registerDevice() }
/// let me = try await session.currentUser()
/// ```
///
/// Refreshes are single-flight: however many requests meet an expired token, one refresh call is made and the
/// others wait for it. A refresh that finishes after ``signOut(scope:)`` (or after another sign-in) is discarded, and a
/// request sent before either is never sent again with the next session's token.
public actor LatchkeySession {
    /// How this session behaves.
    public nonisolated let configuration: Configuration
    let transport: any HTTPTransport
    let webSocketTransport: any WebSocketTransport
    let secureStore: any SecureStore
    let defaults: any KeyValueStore
    let clock: any LatchkeyClock

    /// The credentials as last read or written; `nil` until first loaded. Ahead of the store while
    /// ``hasUnsavedCredentials``.
    var credentials: StoredCredentials?
    /// Whether the last write to the secure store failed; the next use of the session writes again.
    var hasUnsavedCredentials = false
    /// Bumped whenever a session ends or a new one starts; a refresh started under an older generation may not write,
    /// and a request prepared under one is not sent again under another.
    var generation = 0
    var refreshInFlight: RefreshInFlight?
    /// The forced provider call for the token the server rejected last, shared by every request that met that 401.
    var providerRefresh: (rejected: String, task: Task<String?, any Error>)?
    /// What keeps the app running while a refresh finishes (see `followAppLifecycle()`).
    var backgroundExecution: (any BackgroundExecution)?
    /// Storage credentials of the signed-in user, and the fetch of new ones in flight; forgotten with the session.
    var storageCache = StorageCredentialsCache()
    /// The email address waiting for its verification code (the last one registered, or refused at sign-in as not yet
    /// verified), for ``verifyEmail(code:)``; kept in memory only.
    var emailAwaitingVerification: String?
    /// The sign-ins waiting for their turn or running, in the order they started (see `serializedSignIn(_:_:)`).
    var signInsInFlight: [SignInFlight] = []
    /// What tells the processes sharing the secure store about this session's writes, and them about theirs.
    let storeChangeNotifier: (any StoreChangeNotifier)?
    /// The task that follows the notifier's posts, started at the session's first use.
    var storeChangeListener: Task<Void, Never>?
    /// The Latchkey server's origin (``Configuration/serverURL``'s scheme, host and port), where every request of
    /// ``send(_:)`` goes.
    nonisolated let serverOrigin: HTTPOrigin?
    /// The origins of ``Configuration/apiOrigins``, the only others credentials go to.
    nonisolated let apiOrigins: Set<HTTPOrigin>
    /// The current state.
    public private(set) var state: AuthState = .restoring
    private var stateContinuations: [UUID: AsyncStream<AuthState>.Continuation] = [:]
    private var eventContinuations: [UUID: AsyncStream<LatchkeyEvent>.Continuation] = [:]

    struct RefreshInFlight {
        let generation: Int
        let id: UUID
        let task: Task<StoredSession, any Error>
    }

    /// Creates a session. Nothing is read or sent until the first call.
    ///
    /// - Parameters:
    ///   - configuration: the server URL and how the session behaves.
    ///   - secureStore: where tokens and the device identity live (``KeychainStore`` on Apple platforms).
    ///   - defaults: where the device UUID is mirrored. By default `UserDefaults.standard` on Apple platforms; elsewhere
    ///     a `defaults.json` beside a ``FileSecureStore`` (Foundation's `UserDefaults` on Linux keeps nothing across
    ///     processes without `synchronize()`), else ``UserDefaultsStore``, which synchronizes there.
    ///   - transport: how requests are sent (`URLSession` by default).
    ///   - clock: where time comes from.
    ///   - webSocketTransport: how ``liveEvents()`` opens its WebSocket (`URLSessionWebSocketTask` by default).
    public init(
        configuration: Configuration, secureStore: any SecureStore, defaults: (any KeyValueStore)? = nil,
        transport: any HTTPTransport = URLSessionTransport(), clock: any LatchkeyClock = SystemLatchkeyClock(),
        webSocketTransport: any WebSocketTransport = URLSessionWebSocketTransport()
    ) {
        self.configuration = configuration
        self.secureStore = secureStore
        self.defaults = defaults ?? Self.defaultDefaults(beside: secureStore)
        self.transport = transport
        self.webSocketTransport = webSocketTransport
        self.clock = clock
        self.backgroundExecution = configuration.backgroundExecution
        self.storeChangeNotifier = configuration.storeChangeNotifier ?? Self.defaultStoreChangeNotifier(for: secureStore)
        self.serverOrigin = HTTPOrigin(configuration.serverURL)
        self.apiOrigins = Set(configuration.apiOrigins.compactMap(HTTPOrigin.init))
    }

    deinit { self.storeChangeListener?.cancel() }

    private static func defaultDefaults(beside secureStore: any SecureStore) -> any KeyValueStore {
        #if canImport(Darwin)
        return UserDefaultsStore()
        #else
        guard let file = secureStore as? FileSecureStore else { return UserDefaultsStore() }
        return FileKeyValueStore(fileURL: file.fileURL.deletingLastPathComponent().appendingPathComponent("defaults.json"))
        #endif
    }

    /// This install's device UUID, created and stored on first use.
    public func deviceID() throws -> UUID { try self.loadCredentials().deviceID }

    /// A stream of auth states; it starts with the current one.
    public func authStates() -> AsyncStream<AuthState> {
        let id = UUID()
        let (stream, continuation) = AsyncStream<AuthState>.makeStream(bufferingPolicy: .bufferingNewest(16))
        continuation.yield(self.state)
        self.stateContinuations[id] = continuation
        continuation.onTermination = { _ in Task { await self.removeStateContinuation(id) } }
        return stream
    }

    /// A stream of events (state changes, refreshes, sign-outs and their reasons, rate limits) from now on.
    public func events() -> AsyncStream<LatchkeyEvent> {
        let id = UUID()
        let (stream, continuation) = AsyncStream<LatchkeyEvent>.makeStream(bufferingPolicy: .bufferingNewest(64))
        self.eventContinuations[id] = continuation
        continuation.onTermination = { _ in Task { await self.removeEventContinuation(id) } }
        return stream
    }

    private func removeStateContinuation(_ id: UUID) { self.stateContinuations[id] = nil }
    private func removeEventContinuation(_ id: UUID) { self.eventContinuations[id] = nil }

    func setState(_ state: AuthState) {
        guard state != self.state else { return }
        self.state = state
        for continuation in self.stateContinuations.values { continuation.yield(state) }
        self.emit(.stateChanged(state))
    }

    func emit(_ event: LatchkeyEvent) {
        for continuation in self.eventContinuations.values { continuation.yield(event) }
    }

    /// Lets go of everything that belonged to the session in use: a refresh or storage fetch still in flight may no longer
    /// write, and the storage credentials are forgotten.
    func startNewGeneration() {
        self.generation += 1
        self.refreshInFlight = nil
        self.storageCache = StorageCredentialsCache()
    }

    /// Whether `session`'s access token expires within the clock-skew buffer.
    func isExpiring(_ session: StoredSession) -> Bool {
        self.clock.now().addingTimeInterval(self.configuration.clockSkew) >= session.accessTokenExpiresAt
    }

    /// The URL of `path` on the Latchkey server (e.g. `/api/v1/users/me`, a query allowed), with `queryItems` added, as
    /// ``send(_:)`` sends it: below ``Configuration/serverURL`` as its documentation describes (a base ending in
    /// `/api/v1` or `/v1` is the API's base; any other path is a prefix).
    public nonisolated func url(for path: String, queryItems: [URLQueryItem] = []) throws -> URL {
        guard var components = URLComponents(url: self.configuration.serverURL, resolvingAgainstBaseURL: false) else {
            throw LatchkeyError.invalidRequest("the server URL cannot be read")
        }
        let parts = path.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
        components.path = Self.serverPath(base: components.path, path: parts[0].hasPrefix("/") ? parts[0] : "/" + parts[0])
        var items = parts.count > 1 ? (URLComponents(string: "?" + parts[1])?.queryItems ?? []) : []
        items += queryItems
        components.queryItems = items.isEmpty ? nil : items
        // URLComponents leaves `+` as it is, which form decoding (many servers and proxies) reads as a space: an asset key
        // such as `c++/kit.zip` must arrive as written.
        components.percentEncodedQuery = components.percentEncodedQuery?.replacingOccurrences(of: "+", with: "%2B")
        guard let url = components.url else { throw LatchkeyError.invalidRequest("\(path) is not a path on the server") }
        return url
    }

    /// The path of the server's `path` below a server URL whose path is `base`: a base ending in `/api/v1` or `/v1` is
    /// where `/api/v1` is, and the rest of the server is below the base without it; any other base is a prefix.
    static func serverPath(base: String, path: String) -> String {
        let base = base.hasSuffix("/") ? String(base.dropLast()) : base
        let api = "/api/v1"
        let suffix = [api, "/v1"].first { base.hasSuffix($0) }
        let root = suffix.map { String(base.dropLast($0.count)) } ?? base
        let apiBase = suffix == nil ? base + api : base
        if path == api || path.hasPrefix(api + "/") { return apiBase + path.dropFirst(api.count) }
        return root + path
    }
}
