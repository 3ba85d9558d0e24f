import Foundation

/// What keeps the database from being used, as a connection attempt of its own finds out: said at start, by the CLI and
/// in `GET /api/v1/health/ready`'s answer. Never holds a password.
package struct DatabaseFailure: Sendable, Equatable, CustomStringConvertible {
    package enum Kind: Sendable, Equatable {
        /// Nothing listens at the address (PostgreSQL is down).
        case connectionRefused
        /// No answer in time (a firewall, a host that is down, a server that hangs).
        case timedOut
        /// PostgreSQL is starting up, shutting down or out of connections: waiting may cure it.
        case notReady
        /// The server does not offer TLS and the URL requires it.
        case tlsRefused
        /// The user or its password was refused.
        case authenticationFailed
        /// The URL's database does not exist.
        case noSuchDatabase
        /// Anything else.
        case other
    }

    package let kind: Kind
    /// One sentence: what failed, where.
    package let description: String

    /// Whether waiting may cure it (the database is down or starting); the other kinds are settings to fix.
    package var isTransient: Bool { [.connectionRefused, .timedOut, .notReady].contains(self.kind) }
}

extension LatchkeyDatabase {
    /// Why the database cannot be used now, or nil when a fresh connection works; the default: never known.
    package func diagnose() async -> DatabaseFailure? { nil }

    /// After an operation answered ``StoreError/unavailable(_:)``: what failed, when a connection of its own can tell,
    /// as long as waiting may cure it; a failure only a setting can cure (authentication, a missing database, TLS
    /// refused) is thrown as a ``LatchkeyConfigurationError``.
    package func transientFailure() async throws -> DatabaseFailure? {
        guard let failure = await self.diagnose() else { return nil }
        guard failure.isTransient else { throw LatchkeyConfigurationError(description: failure.description) }
        return failure
    }
}
