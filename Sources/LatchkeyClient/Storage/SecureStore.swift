import Foundation

/// Where the SDK keeps the device identity and the session tokens.
///
/// Three implementations: ``KeychainStore`` (Apple platforms), ``FileSecureStore`` (Linux and command-line apps)
/// and ``InMemorySecureStore`` (tests, previews). Calls are synchronous and short; the session actor serialises them.
public protocol SecureStore: Sendable {
    /// The stored credentials, or `nil` when nothing is stored.
    func load() throws -> StoredCredentials?
    /// Replaces what is stored with `credentials`.
    func save(_ credentials: StoredCredentials) throws
    /// Removes everything, device identity included.
    func removeAll() throws
    /// Reads what is stored and replaces it with what `change` returns (`nil`: leave it as it is), as one step where
    /// the store can make it one.
    ///
    /// The session uses it to compare and swap: a refresh writes its new tokens only over the session it refreshed, a
    /// sign-out clears only its own session, so another process (an app extension, a second CLI run) that stored the
    /// next user's session meanwhile keeps it. The default reads and saves; ``FileSecureStore`` holds a file lock across
    /// both, so no other process writes in between; ``KeychainStore`` writes only over the version it read and, when
    /// another process wrote first, reads again and calls `change` again. So `change` may run more than once, each time
    /// with what the store holds then: it must only compute its answer.
    func update(_ change: (StoredCredentials?) throws -> StoredCredentials?) throws
}

extension SecureStore {
    /// Reads, then saves what `change` returns; a store that can lock across both should do so.
    public func update(_ change: (StoredCredentials?) throws -> StoredCredentials?) throws {
        if let next = try change(try self.load()) { try self.save(next) }
    }
}

/// Why a ``SecureStore`` call failed; ``problem`` is what the session reports. Messages contain no token or secret.
public enum SecureStoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The store cannot be read right now: the Keychain is locked before the first unlock after boot
    /// (``StoreProblem/locked``). Not the same as "signed out": try again later.
    case unavailable(String)
    /// What is stored cannot be read as credentials (``StoreProblem/unreadable``).
    case corrupt
    /// The app's setup keeps the store from working (``StoreProblem/misconfigured(_:)``): a Keychain access group
    /// missing from its entitlements, no Keychain, a directory it may not write.
    case misconfigured(String)
    /// Any other failure (``StoreProblem/failed(_:)``).
    case failed(String)

    /// What is wrong, in the categories an app acts on.
    public var problem: StoreProblem {
        switch self {
        case .unavailable: .locked
        case .corrupt: .unreadable
        case .misconfigured(let reason): .misconfigured(reason)
        case .failed(let reason): .failed(reason)
        }
    }

    /// A sentence a person can read.
    public var description: String {
        switch self {
        case .unavailable(let reason): "Secure storage is not available right now (\(reason))."
        case .corrupt: "The stored credentials could not be read."
        case .misconfigured(let reason): "Secure storage is not set up correctly: \(reason)."
        case .failed(let reason): "Secure storage failed: \(reason)."
        }
    }
}

/// A ``SecureStore`` in memory. Two sessions given the same instance share it, as two processes share a Keychain.
public final class InMemorySecureStore: SecureStore {
    private let stored: Locked<StoredCredentials?>

    /// Creates a store holding `credentials`.
    public init(_ credentials: StoredCredentials? = nil) { self.stored = Locked(credentials) }

    /// The stored credentials.
    public func load() throws -> StoredCredentials? { self.stored.withLock { $0 } }
    /// Replaces the stored credentials.
    public func save(_ credentials: StoredCredentials) throws { self.stored.withLock { $0 = credentials } }
    /// Forgets everything.
    public func removeAll() throws { self.stored.withLock { $0 = nil } }
    /// Reads and replaces under one lock.
    public func update(_ change: (StoredCredentials?) throws -> StoredCredentials?) throws {
        try self.stored.withLock { stored in if let next = try change(stored) { stored = next } }
    }
}
