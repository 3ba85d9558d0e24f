import Foundation
import LatchkeyAPI

/// An app's Latchkey session: device identity, tokens, refresh, and every request to the server.
///
/// Create one per app (per process) at launch and call ``bootstrap()``:
///
/// ```swift
/// let session = LatchkeySession(configuration: .init(serverURL: URL(string: "https://auth.example.com")!),
///                               secureStore: KeychainStore(service: "com.example.app"))
/// if await session.bootstrap() == .signedOut { try await session.registerDevice() }
/// let me = try await session.currentUser()
/// ```
///
/// Refreshes are single-flight: however many requests meet an expired token, one refresh call is made and the
/// others wait for it. A refresh that finishes after ``signOut(scope:)`` (or after another sign-in) is discarded.
public actor LatchkeySession {
    /// How this session behaves.
    public nonisolated let configuration: Configuration
    let transport: any HTTPTransport
    let secureStore: any SecureStore
    let defaults: any KeyValueStore
    let clock: any LatchkeyClock

    /// The credentials as last read or written; `nil` until first loaded.
    var credentials: StoredCredentials?
    /// Bumped whenever a session ends or a new one starts; a refresh or storage fetch started under an older generation may
    /// not write.
    var generation = 0
    var refreshInFlight: RefreshInFlight?
    /// Storage credentials of the signed-in user, and the fetch of new ones in flight; forgotten with the session.
    var storageCache = StorageCredentialsCache()
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
    ///   - secureStore: where tokens and the device identity live (``KeychainStore`` on Apple platforms).
    ///   - defaults: where the device UUID is mirrored (`UserDefaults.standard` by default).
    ///   - transport: how requests are sent (`URLSession` by default).
    ///   - clock: where time comes from.
    public init(
        configuration: Configuration, secureStore: any SecureStore, defaults: any KeyValueStore = UserDefaultsStore(),
        transport: any HTTPTransport = URLSessionTransport(), clock: any LatchkeyClock = SystemLatchkeyClock()
    ) {
        self.configuration = configuration
        self.secureStore = secureStore
        self.defaults = defaults
        self.transport = transport
        self.clock = clock
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

    /// A stream of events (state changes and rate limits) from now on.
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

    /// The credentials, resolving the device identity on first use.
    func loadCredentials() throws -> StoredCredentials {
        if let credentials = self.credentials { return credentials }
        do {
            let credentials = try DeviceIdentity(
                secureStore: self.secureStore, defaults: self.defaults, defaultsKey: self.configuration.deviceIDDefaultsKey,
                reinstallPolicy: self.configuration.reinstallPolicy
            ).resolve()
            self.credentials = credentials
            return credentials
        } catch let error as SecureStoreError {
            throw error.latchkeyError
        }
    }

    /// Writes `credentials` to the store and keeps them in memory.
    func persist(_ credentials: StoredCredentials) throws {
        do { try self.secureStore.save(credentials) } catch let error as SecureStoreError { throw error.latchkeyError }
        self.credentials = credentials
    }

    /// Starts `session` as the current one: later refreshes of an older session cannot overwrite it.
    func begin(_ session: StoredSession, deviceSecret: String? = nil) throws -> AuthSession {
        var credentials = try self.loadCredentials()
        credentials.session = session
        if let deviceSecret { credentials.deviceSecret = deviceSecret }
        self.startNewGeneration()
        try self.persist(credentials)
        self.setState(.signedIn(AuthSession(session)))
        return AuthSession(session)
    }

    /// Ends the current session locally (the device identity stays) and moves to `state`.
    func endSession(_ state: AuthState) {
        self.startNewGeneration()
        if var credentials = self.credentials ?? (try? self.loadCredentials()), credentials.session != nil {
            credentials.session = nil
            try? self.persist(credentials)
        }
        self.setState(state)
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

    func url(for path: String, queryItems: [URLQueryItem] = []) throws -> URL {
        guard var components = URLComponents(url: self.configuration.serverURL, resolvingAgainstBaseURL: false) else {
            throw LatchkeyError.invalidResponse
        }
        let base = components.path.hasSuffix("/") ? String(components.path.dropLast()) : components.path
        let parts = path.split(separator: "?", maxSplits: 1).map(String.init)
        components.path = base + parts[0]
        var items = parts.count > 1 ? (URLComponents(string: "?" + parts[1])?.queryItems ?? []) : []
        items += queryItems
        components.queryItems = items.isEmpty ? nil : items
        // URLComponents leaves `+` as it is, which form decoding (many servers and proxies) reads as a space: an asset key
        // such as `c++/kit.zip` must arrive as written.
        components.percentEncodedQuery = components.percentEncodedQuery?.replacingOccurrences(of: "+", with: "%2B")
        guard let url = components.url else { throw LatchkeyError.invalidResponse }
        return url
    }
}
