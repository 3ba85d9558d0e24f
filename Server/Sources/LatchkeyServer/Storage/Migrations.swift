import Foundation
import Logging
import SQLKit

/// The schema, as an ordered list of migrations applied once each and recorded in `latchkey_migrations`.
///
/// Types are chosen to mean the same on SQLite and PostgreSQL: times are seconds since 1970 as
/// `DOUBLE PRECISION`, IDs are canonical lowercase UUID strings, binary values are base64 text.
/// `{clustered}` marks tables keyed by text: on SQLite they are `WITHOUT ROWID`, so a row and its
/// key live in one B-tree and an insert dirties one page instead of two. `{serial}` is an increasing
/// integer key: SQLite's rowid alias, PostgreSQL's `BIGSERIAL`.
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
                    seq {serial} PRIMARY KEY, scope TEXT NOT NULL, value TEXT NOT NULL, created_at DOUBLE PRECISION NOT NULL)
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
        (
            4,
            [
                // Sign in with Apple: the refresh token account deletion revokes, and nonces accepted once only.
                "ALTER TABLE identities ADD COLUMN client_id TEXT",
                "ALTER TABLE identities ADD COLUMN sealed_refresh_token TEXT",
                "CREATE TABLE used_nonces (nonce_hash TEXT PRIMARY KEY, expires_at DOUBLE PRECISION NOT NULL) {clustered}",
                "CREATE INDEX used_nonces_expires_at ON used_nonces(expires_at)",
            ]
        ),
        (
            5,
            [
                // Sender-constrained refresh tokens (DPoP): the device's key and the key a session is bound to.
                "ALTER TABLE devices ADD COLUMN key_thumbprint TEXT",
                "ALTER TABLE sessions ADD COLUMN dpop_thumbprint TEXT",
                // Sessions exchanged from an access code end when the code is revoked.
                "ALTER TABLE sessions ADD COLUMN access_code_id TEXT",
                "CREATE INDEX sessions_access_code_id ON sessions(access_code_id)",
                "CREATE INDEX sessions_revoked_at ON sessions(revoked_at)",
                // DPoP proofs are accepted once (their jti, hashed).
                "CREATE TABLE dpop_proofs (jti_hash TEXT PRIMARY KEY, expires_at DOUBLE PRECISION NOT NULL) {clustered}",
                "CREATE INDEX dpop_proofs_expires_at ON dpop_proofs(expires_at)",
                // A deleted user's ID cannot be registered again until support frees it.
                "CREATE TABLE deleted_users (id TEXT PRIMARY KEY, deleted_at DOUBLE PRECISION NOT NULL) {clustered}",
                // A revoked signing key verifies nothing and leaves the JWKS at once.
                "ALTER TABLE signing_keys ADD COLUMN revoked_at DOUBLE PRECISION",
                // Pruning reads these in time order.
                "CREATE INDEX rate_limit_hits_at ON rate_limit_hits(at)",
                "CREATE INDEX refresh_tokens_expires_at ON refresh_tokens(expires_at)",
            ]
        ),
        (
            6,
            [
                // Email and password accounts: one address per user, unique ignoring case (email_key is it lowercased).
                """
                CREATE TABLE email_accounts (
                    user_id TEXT PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE, email TEXT NOT NULL,
                    email_key TEXT NOT NULL UNIQUE, password_hash TEXT NOT NULL, verified_at DOUBLE PRECISION,
                    created_at DOUBLE PRECISION NOT NULL, password_changed_at DOUBLE PRECISION NOT NULL) {clustered}
                """,
                // The one live code of each purpose (verify, reset) per user: the 6-digit code's HMAC and the link token's hash.
                """
                CREATE TABLE email_codes (
                    user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE, purpose TEXT NOT NULL,
                    code_hash TEXT NOT NULL, link_hash TEXT NOT NULL UNIQUE, attempts INTEGER NOT NULL,
                    created_at DOUBLE PRECISION NOT NULL, expires_at DOUBLE PRECISION NOT NULL, PRIMARY KEY (user_id, purpose)) {clustered}
                """,
                "CREATE INDEX email_codes_expires_at ON email_codes(expires_at)",
                // Mails to send, committed with what caused them; the message is sealed with the master key (it holds codes).
                """
                CREATE TABLE outbox (
                    id {serial} PRIMARY KEY, recipient TEXT NOT NULL, purpose TEXT NOT NULL, message_id TEXT NOT NULL,
                    sealed_message TEXT, created_at DOUBLE PRECISION NOT NULL, next_attempt_at DOUBLE PRECISION NOT NULL,
                    attempts INTEGER NOT NULL, last_error TEXT, claimed_until DOUBLE PRECISION, sent_at DOUBLE PRECISION,
                    failed_at DOUBLE PRECISION)
                """,
                "CREATE INDEX outbox_next_attempt_at ON outbox(next_attempt_at)",
            ]
        ),
        (
            7,
            [
                // The audit log of support actions (CLI and admin console): who, what, on what, when, from where.
                """
                CREATE TABLE audit_events (
                    id {serial} PRIMARY KEY, at DOUBLE PRECISION NOT NULL, actor TEXT NOT NULL, action TEXT NOT NULL,
                    target TEXT NOT NULL, source TEXT NOT NULL, details TEXT)
                """,
                "CREATE INDEX audit_events_at ON audit_events(at)",
                // Admin console accounts, apart from app users: a password hash (set through a one-time setup link, whose
                // SHA-256 is kept until used) and sessions kept by the SHA-256 of their cookie.
                """
                CREATE TABLE admin_accounts (
                    id TEXT PRIMARY KEY, email TEXT NOT NULL, email_key TEXT NOT NULL UNIQUE, password_hash TEXT,
                    setup_hash TEXT UNIQUE, setup_expires_at DOUBLE PRECISION, created_at DOUBLE PRECISION NOT NULL,
                    last_login_at DOUBLE PRECISION) {clustered}
                """,
                """
                CREATE TABLE admin_sessions (
                    id_hash TEXT PRIMARY KEY, admin_id TEXT NOT NULL REFERENCES admin_accounts(id) ON DELETE CASCADE,
                    created_at DOUBLE PRECISION NOT NULL, last_seen_at DOUBLE PRECISION NOT NULL,
                    expires_at DOUBLE PRECISION NOT NULL, ip TEXT NOT NULL) {clustered}
                """,
                "CREATE INDEX admin_sessions_admin_id ON admin_sessions(admin_id)",
            ]
        ),
        (
            8,
            [
                // An email address is unique among verified accounts only (an unverified one belongs to nobody and blocks
                // nothing), and `attached` says whether it was added to a user that existed before (such an address is
                // never reset before it is verified). SQLite cannot drop a column's UNIQUE, so the table is rebuilt.
                """
                CREATE TABLE email_accounts_v8 (
                    user_id TEXT PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE, email TEXT NOT NULL,
                    email_key TEXT NOT NULL, password_hash TEXT NOT NULL, verified_at DOUBLE PRECISION,
                    created_at DOUBLE PRECISION NOT NULL, password_changed_at DOUBLE PRECISION NOT NULL, attached INTEGER NOT NULL) {clustered}
                """,
                """
                INSERT INTO email_accounts_v8 (user_id, email, email_key, password_hash, verified_at, created_at, password_changed_at, attached)
                SELECT a.user_id, a.email, a.email_key, a.password_hash, a.verified_at, a.created_at, a.password_changed_at,
                    CASE WHEN EXISTS (SELECT 1 FROM devices d WHERE d.user_id = a.user_id)
                        OR EXISTS (SELECT 1 FROM identities i WHERE i.user_id = a.user_id) THEN 1 ELSE 0 END
                FROM email_accounts a
                """,
                "DROP TABLE email_accounts",
                "ALTER TABLE email_accounts_v8 RENAME TO email_accounts",
                "CREATE UNIQUE INDEX email_accounts_verified_key ON email_accounts(email_key) WHERE verified_at IS NOT NULL",
                "CREATE INDEX email_accounts_email_key ON email_accounts(email_key)",
            ]
        ),
        (
            9,
            [
                // A refresh token handed back late (a lost answer, or a copy presented beside its owner): a second late
                // hand-back from it revokes the session.
                "ALTER TABLE refresh_tokens ADD COLUMN handed_back INTEGER NOT NULL DEFAULT 0"
            ]
        ),
        (
            10,
            [
                // `logout global` dooms a keyless device's secret: the device's next `register-device` with it gets a new one.
                "ALTER TABLE devices ADD COLUMN secret_rotation_due INTEGER NOT NULL DEFAULT 0"
            ]
        ),
        (
            11,
            [
                // Pruning finds spent refresh tokens past the grace window without reading the whole table.
                "CREATE INDEX refresh_tokens_used_at ON refresh_tokens(used_at) WHERE used_at IS NOT NULL"
            ]
        ),
        (
            12,
            [
                // A rotated key is published at once and signs only from this time (keys.publish-ahead); NULL: from created_at.
                "ALTER TABLE signing_keys ADD COLUMN signs_from DOUBLE PRECISION"
            ]
        ),
        (
            13,
            [
                // Second factors: how a session's user authenticated (`amr`, space-separated) and when it last proved a
                // second factor (NULL: aal1).
                "ALTER TABLE sessions ADD COLUMN amr TEXT",
                "ALTER TABLE sessions ADD COLUMN aal2_at DOUBLE PRECISION",
                // TOTP factors: the secret sealed with the master key; `last_step` is the newest 30-second step a code of it
                // verified for, so a code is accepted once. One confirmed factor per user.
                """
                CREATE TABLE mfa_factors (
                    id TEXT PRIMARY KEY, user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE, type TEXT NOT NULL,
                    sealed_secret TEXT NOT NULL, created_at DOUBLE PRECISION NOT NULL, confirmed_at DOUBLE PRECISION,
                    last_step BIGINT) {clustered}
                """,
                "CREATE INDEX mfa_factors_user_id ON mfa_factors(user_id)",
                // Recovery codes, only as salted SHA-256; each used once.
                """
                CREATE TABLE recovery_codes (
                    user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE, code_hash TEXT NOT NULL, salt TEXT NOT NULL,
                    created_at DOUBLE PRECISION NOT NULL, used_at DOUBLE PRECISION, PRIMARY KEY (user_id, code_hash)) {clustered}
                """,
                // A sign-in that proved one factor, waiting for the second: the mfa_token's hash, what the session will be.
                """
                CREATE TABLE mfa_challenges (
                    token_hash TEXT PRIMARY KEY, user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE, device_id TEXT,
                    amr TEXT NOT NULL, dpop_thumbprint TEXT, created_at DOUBLE PRECISION NOT NULL,
                    expires_at DOUBLE PRECISION NOT NULL, failures INTEGER NOT NULL, used_at DOUBLE PRECISION) {clustered}
                """,
                "CREATE INDEX mfa_challenges_expires_at ON mfa_challenges(expires_at)",
            ]
        ),
        (
            14,
            [
                // An admin's TOTP factor: the secret sealed with the master key (unconfirmed until `totp_confirmed_at`),
                // and the newest step a code of it was accepted for, so a code is accepted once.
                "ALTER TABLE admin_accounts ADD COLUMN sealed_totp_secret TEXT",
                "ALTER TABLE admin_accounts ADD COLUMN totp_confirmed_at DOUBLE PRECISION",
                "ALTER TABLE admin_accounts ADD COLUMN totp_last_step BIGINT",
                // An admin's recovery codes, only as salted SHA-256; each used once.
                """
                CREATE TABLE admin_recovery_codes (
                    admin_id TEXT NOT NULL REFERENCES admin_accounts(id) ON DELETE CASCADE, code_hash TEXT NOT NULL, salt TEXT NOT NULL,
                    created_at DOUBLE PRECISION NOT NULL, used_at DOUBLE PRECISION, PRIMARY KEY (admin_id, code_hash)) {clustered}
                """,
                // Whether a console session passed the second step (a code, or the enrolment it confirmed); a session of
                // an admin with a factor that has not is waiting for the code and can do nothing else.
                "ALTER TABLE admin_sessions ADD COLUMN mfa_passed INTEGER NOT NULL DEFAULT 0",
            ]
        ),
        (
            15,
            [
                // Passkeys (WebAuthn): the credential ID (base64url, unique among all users), the COSE public key (base64url),
                // the last signature counter accepted, the backup flags (BE at registration, BS as last seen). They go with
                // their user.
                """
                CREATE TABLE passkeys (
                    id TEXT PRIMARY KEY, user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                    credential_id TEXT NOT NULL UNIQUE, public_key TEXT NOT NULL, algorithm INTEGER NOT NULL, sign_count BIGINT NOT NULL,
                    backup_eligible INTEGER NOT NULL, backed_up INTEGER NOT NULL, aaguid TEXT NOT NULL, attestation_format TEXT NOT NULL,
                    transports TEXT, name TEXT NOT NULL, created_at DOUBLE PRECISION NOT NULL, last_used_at DOUBLE PRECISION) {clustered}
                """,
                "CREATE INDEX passkeys_user_id ON passkeys(user_id)",
                // A ceremony's challenge, kept by its challenge_id's SHA-256 until it is answered (once) or expires; a
                // registration's names the user and the session that asked for it.
                """
                CREATE TABLE passkey_challenges (
                    id_hash TEXT PRIMARY KEY, ceremony TEXT NOT NULL, challenge TEXT NOT NULL,
                    user_id TEXT REFERENCES users(id) ON DELETE CASCADE, session_id TEXT, created_at DOUBLE PRECISION NOT NULL,
                    expires_at DOUBLE PRECISION NOT NULL) {clustered}
                """,
                "CREATE INDEX passkey_challenges_expires_at ON passkey_challenges(expires_at)",
            ]
        ),
        (
            16,
            [
                // The webhook outbox: an event is written in the transaction of the change it tells (no foreign key to
                // users: `user.deleted` outlives its user), then fanned out to the configured endpoints (one delivery per
                // event and endpoint) and delivered with retries. `endpoint` set: for that endpoint only (`send-test`).
                """
                CREATE TABLE webhook_events (
                    id TEXT PRIMARY KEY, type TEXT NOT NULL, user_id TEXT, data TEXT NOT NULL,
                    created_at DOUBLE PRECISION NOT NULL, endpoint TEXT, fanned_out INTEGER NOT NULL DEFAULT 0) {clustered}
                """,
                "CREATE INDEX webhook_events_fan_out ON webhook_events(fanned_out, created_at)",
                // `status`: pending, delivered or failed; leased by `claimed_until` (FOR UPDATE SKIP LOCKED on PostgreSQL).
                """
                CREATE TABLE webhook_deliveries (
                    event_id TEXT NOT NULL REFERENCES webhook_events(id) ON DELETE CASCADE, endpoint TEXT NOT NULL,
                    status TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 0, created_at DOUBLE PRECISION NOT NULL,
                    next_attempt_at DOUBLE PRECISION NOT NULL, claimed_until DOUBLE PRECISION, last_attempt_at DOUBLE PRECISION,
                    last_status INTEGER, last_error TEXT, finished_at DOUBLE PRECISION, PRIMARY KEY (event_id, endpoint)) {clustered}
                """,
                "CREATE INDEX webhook_deliveries_due ON webhook_deliveries(status, next_attempt_at)",
                // An endpoint that answered 410 stays disabled (across restarts) until `latchkey webhooks enable <name>`.
                """
                CREATE TABLE webhook_endpoint_states (
                    name TEXT PRIMARY KEY, disabled_at DOUBLE PRECISION, disabled_reason TEXT) {clustered}
                """,
                // A disabled user (backend API, support): every sign-in and refresh answers 403 user_disabled.
                "ALTER TABLE users ADD COLUMN disabled_at DOUBLE PRECISION",
                // The backend's app_metadata: a JSON object's text, carried in every access token as `app_metadata`.
                "ALTER TABLE users ADD COLUMN app_metadata TEXT",
            ]
        ),
        (
            17,
            [
                // App Attest: a device UUID's attested key (guests have no device row, so it is keyed by the UUID, and a
                // UUID stays attested). `method`: attestation (public key base64, last assertion counter, Apple's receipt
                // kept opaque) or debug_token (the token's ID).
                """
                CREATE TABLE app_attest_keys (
                    device_id TEXT PRIMARY KEY, key_id TEXT NOT NULL UNIQUE, public_key TEXT, counter BIGINT NOT NULL, receipt TEXT,
                    app_id TEXT, method TEXT NOT NULL, debug_token_id TEXT, attested_at DOUBLE PRECISION NOT NULL,
                    user_id TEXT) {clustered}
                """,
                // A challenge the server handed out, by the SHA-256 (hex) of its 32 bytes, until it is used (once) or expires.
                "CREATE TABLE app_attest_challenges (id TEXT PRIMARY KEY, expires_at DOUBLE PRECISION NOT NULL) {clustered}",
                "CREATE INDEX app_attest_challenges_expires_at ON app_attest_challenges(expires_at)",
                // Debug tokens for simulators and CI, only as SHA-256.
                """
                CREATE TABLE app_attest_debug_tokens (
                    id TEXT PRIMARY KEY, name TEXT NOT NULL, token_hash TEXT NOT NULL UNIQUE, created_at DOUBLE PRECISION NOT NULL,
                    revoked_at DOUBLE PRECISION, last_used_at DOUBLE PRECISION) {clustered}
                """,
            ]
        ),
        (
            18,
            [
                // "Where you're signed in": how a session began (`device`, `password`, `apple`, `google`, `passkey`,
                // `access_code`, `federated`; NULL for a session stored before: told by its `amr`) and when it was last
                // used (its creation, then each refresh).
                "ALTER TABLE sessions ADD COLUMN method TEXT",
                "ALTER TABLE sessions ADD COLUMN last_used_at DOUBLE PRECISION",
                // Console roles, cumulative: viewer (read only) ⊂ support (user actions) ⊂ owner (keys, admins, codes).
                // Accounts made before roles existed are owners.
                "ALTER TABLE admin_accounts ADD COLUMN role TEXT NOT NULL DEFAULT 'owner'",
            ]
        ),
    ]

    /// Applies every migration not yet recorded, all in one transaction.
    ///
    /// Safe when several processes start at once on an empty database: on PostgreSQL the transaction
    /// first takes an advisory lock (one per schema), so one process applies the migrations while the others wait and
    /// then find them recorded; on SQLite the write transaction itself excludes other writers. The transaction is patient
    /// (``LatchkeyDatabase/patientTransaction(_:)``): neither that wait nor a long migration is cut off at `database.timeout`.
    static func run(on database: any LatchkeyDatabase, clock: any WallClock, logger: Logger) async throws {
        let dialect = database.dialect
        let now = clock.now().timeIntervalSince1970
        let applied = try await database.patientTransaction { sql -> [Int] in
            if dialect == .postgresql {
                try await sql.raw("SELECT pg_advisory_xact_lock(hashtextextended('latchkey migrations ' || current_schema(), 0))").run()
            }
            try await sql.raw(
                "CREATE TABLE IF NOT EXISTS latchkey_migrations (version INTEGER PRIMARY KEY, applied_at DOUBLE PRECISION NOT NULL)"
            ).run()
            let done = Set(
                try await sql.raw("SELECT version FROM latchkey_migrations").all().map { try $0.decode(column: "version", as: Int.self) })
            var applied: [Int] = []
            for migration in Self.all where !done.contains(migration.version) {
                for statement in migration.statements {
                    try await sql.raw(SQLQueryString(Self.render(statement, for: dialect))).run()
                }
                try await sql.raw(
                    "INSERT INTO latchkey_migrations (version, applied_at) VALUES (\(bind: migration.version), \(bind: now))"
                ).run()
                applied.append(migration.version)
            }
            return applied
        }
        for version in applied { logger.info("applied database migration", metadata: ["version": "\(version)"]) }
    }

    /// Fills in the placeholders that differ between the dialects.
    static func render(_ statement: String, for dialect: DatabaseDialect) -> String {
        switch dialect {
        case .sqlite:
            statement.replacingOccurrences(of: "{clustered}", with: "WITHOUT ROWID").replacingOccurrences(of: "{serial}", with: "INTEGER")
        case .postgresql:
            statement.replacingOccurrences(of: " {clustered}", with: "").replacingOccurrences(of: "{serial}", with: "BIGSERIAL")
        }
    }
}
