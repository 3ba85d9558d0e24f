import Foundation
import Logging
import SQLKit

/// The schema, as an ordered list of migrations applied once each and recorded in `latchkey_migrations`.
///
/// Types are chosen to mean the same on SQLite and PostgreSQL: times are seconds since 1970 as
/// `DOUBLE PRECISION`, IDs are canonical lowercase UUID strings, binary values are base64 text.
/// `{clustered}` marks tables keyed by text: on SQLite they are `WITHOUT ROWID`, so a row and its
/// key live in one B-tree and an insert dirties one page instead of two.
enum Migrations {
    static let all: [(version: Int, statements: [String])] = [
        (
            1,
            [
                """
                CREATE TABLE users (
                    id TEXT PRIMARY KEY, kind TEXT NOT NULL, created_at DOUBLE PRECISION NOT NULL) {clustered}
                """,
                """
                CREATE TABLE devices (
                    id TEXT PRIMARY KEY, user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                    secret_hash TEXT NOT NULL, created_at DOUBLE PRECISION NOT NULL, last_seen_at DOUBLE PRECISION) {clustered}
                """,
                "CREATE INDEX devices_user_id ON devices(user_id)",
                """
                CREATE TABLE identities (
                    provider TEXT NOT NULL, subject TEXT NOT NULL,
                    user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                    email TEXT, created_at DOUBLE PRECISION NOT NULL, PRIMARY KEY (provider, subject)) {clustered}
                """,
                "CREATE INDEX identities_user_id ON identities(user_id)",
                """
                CREATE TABLE sessions (
                    id TEXT PRIMARY KEY, user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                    device_id TEXT, created_at DOUBLE PRECISION NOT NULL,
                    revoked_at DOUBLE PRECISION, revoked_reason TEXT) {clustered}
                """,
                "CREATE INDEX sessions_user_id ON sessions(user_id)",
                """
                CREATE TABLE refresh_tokens (
                    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE, token_hash TEXT NOT NULL,
                    created_at DOUBLE PRECISION NOT NULL, expires_at DOUBLE PRECISION NOT NULL, used_at DOUBLE PRECISION,
                    PRIMARY KEY (session_id, token_hash)) {clustered}
                """,
                """
                CREATE TABLE access_codes (
                    id TEXT PRIMARY KEY, user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                    note TEXT, created_at DOUBLE PRECISION NOT NULL, expires_at DOUBLE PRECISION NOT NULL,
                    revoked_at DOUBLE PRECISION) {clustered}
                """,
                "CREATE INDEX access_codes_user_id ON access_codes(user_id)",
                """
                CREATE TABLE signing_keys (
                    kid TEXT PRIMARY KEY, algorithm TEXT NOT NULL, public_key TEXT NOT NULL,
                    sealed_private_key TEXT NOT NULL, created_at DOUBLE PRECISION NOT NULL, retired_at DOUBLE PRECISION)
                """,
                "CREATE TABLE settings (name TEXT PRIMARY KEY, value TEXT NOT NULL) {clustered}",
                // What other processes must drop from their verification caches, in commit order.
                """
                CREATE TABLE revocations (
                    seq INTEGER PRIMARY KEY, scope TEXT NOT NULL, value TEXT NOT NULL, created_at DOUBLE PRECISION NOT NULL)
                """,
            ]
        ),
        (
            2,
            [
                """
                CREATE TABLE rate_limit_hits (
                    bucket TEXT NOT NULL, at DOUBLE PRECISION NOT NULL, id TEXT NOT NULL, PRIMARY KEY (bucket, at, id)) {clustered}
                """
            ]
        ),
        (
            3,
            [
                """
                CREATE TABLE budgets (
                    user_id TEXT PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE, budget_limit DOUBLE PRECISION NOT NULL) {clustered}
                """,
                """
                CREATE TABLE usage_records (
                    user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE, idempotency_key TEXT NOT NULL,
                    amount DOUBLE PRECISION NOT NULL, at DOUBLE PRECISION NOT NULL, PRIMARY KEY (user_id, idempotency_key)) {clustered}
                """,
            ]
        ),
    ]

    /// Applies every migration not yet recorded, each in its own transaction.
    static func run(on database: any LatchkeyDatabase, clock: any WallClock, logger: Logger) async throws {
        try await database.transaction { sql in
            try await sql.raw(
                "CREATE TABLE IF NOT EXISTS latchkey_migrations (version INTEGER PRIMARY KEY, applied_at DOUBLE PRECISION NOT NULL)"
            ).run()
        }
        for migration in Self.all {
            let applied = try await database.transaction { sql -> Bool in
                let done = try await sql.raw("SELECT version FROM latchkey_migrations WHERE version = \(bind: migration.version)")
                    .first() != nil
                if done { return false }
                for statement in migration.statements {
                    let clustered = database.dialect == .sqlite ? "WITHOUT ROWID" : ""
                    try await sql.raw(SQLQueryString(statement.replacingOccurrences(of: "{clustered}", with: clustered))).run()
                }
                try await sql.raw(
                    "INSERT INTO latchkey_migrations (version, applied_at) VALUES (\(bind: migration.version), \(bind: clock.now().timeIntervalSince1970))"
                ).run()
                return true
            }
            if applied { logger.info("applied database migration", metadata: ["version": "\(migration.version)"]) }
        }
    }
}
