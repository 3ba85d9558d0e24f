/// What each setting does, one line each: the meaning column of the README's settings reference
/// (`latchkey config reference` prints the table; a test holds the README to it). Keys of per-name families use
/// `<name>` (`meters.<name>.window`, `providers.<name>.issuer`).
public enum SettingsReference {
    package static let meanings: [String: String] = [
        "admin.enabled": "Serve the admin console under `/admin`; while false the console is not served at all.",
        "admin.idle-timeout": "Seconds a console session may go unused before it ends (60 to 86400).",
        "admin.port": "Serve the console on this port of `host` only, not on the API's port, so it can be firewalled apart (with its own "
            + "`http.max-connections`); unset: the API's port.",
        "admin.public-url": "The console's absolute URL in the setup links `latchkey admin create` prints; unset: the public URL, or "
            + "`http://<host>:<admin.port>` with a port of its own.",
        "admin.require-mfa": "Whether every console admin needs a second factor: one without a confirmed authenticator app (TOTP) is sent to "
            + "enrol right after the password and can do nothing else until done; false: such an admin may enrol from the account page.",
        "admin.secure-cookies": "Whether the console's session cookie is `Secure`; unset: `Secure` when the console's URL is https.",
        "admin.session-lifetime": "Seconds a console session lasts after sign-in, however it is used (300 to 604800).",
        "app-attest.allow-debug-tokens": "Whether debug tokens (`latchkey app-attest debug-token create`) stand in for an attestation, for "
            + "simulators and CI; every use is audited (`app_attest.debug_token_used`).",
        "app-attest.app-ids": "The apps (`TEAMID.bundle.id`, a JSON array or comma-separated) whose App Attest attestations are accepted; "
            + "required unless `app-attest.policy` is `off`.",
        "app-attest.environment": "`production`, or `development` for builds signed for development (the AAGUID `appattestdevelop`).",
        "app-attest.policy": "`off`: `app_attest` is ignored; `report`: verified and recorded, never refused; `guests`: guest tokens only for "
            + "attested devices; `required`: registering a device and guest tokens need attestation.",
        "app-attest.roots": "For tests only (the start logs a warning): extra root certificates beside Apple's pinned App Attestation Root "
            + "CA, each PEM text or a file path.",
        "app-attest.unattested-guest-limit": "Under `report` and `guests`: the guest meters' limit for devices that are not attested (1 or "
            + "more); under `guests`, setting it lets them have guest tokens at all. Unset: the meters' own limit (`report`) or refused (`guests`).",
        "apple.client-ids": "Sign in with Apple's accepted `aud` values, comma-separated: the app's bundle ID and its Services ID; empty turns Sign "
            + "in with Apple off.",
        "apple.jwks-url": "Where Apple's public keys for identity tokens are fetched (https; http only for a loopback address); change it only to "
            + "point tests at a stand-in.",
        "apple.key-id": "The key ID of the Sign in with Apple `.p8` key; with `apple.team-id` and the private key, authorization codes can be "
            + "exchanged and Apple tokens revoked.",
        "apple.leeway": "Seconds an Apple identity token's `iat` or `nbf` may lie ahead of this server's clock.",
        "apple.private-key": "Secret, never shown: the PEM text of the Sign in with Apple `.p8` key (EC P-256) that signs the client secret; "
            + "without it or `apple.private-key-file` authorization codes are refused.",
        "apple.private-key-file": "A file holding the `.p8` key's PEM, read when `apple.private-key` is not set.",
        "apple.revoke-url": "Apple's revocation endpoint: an account's Apple refresh token is revoked there before the account is deleted, and "
            + "nothing is deleted unless Apple confirms (502).",
        "apple.team-id": "The Apple developer team ID the client secret is issued for; needed, with `apple.key-id` and the private key, to exchange "
            + "authorization codes.",
        "apple.token-url": "Apple's token endpoint, where authorization codes are exchanged for Apple refresh tokens (kept sealed with the master "
            + "key).",
        "audience": "The `aud` claim of every token this server issues except guest tokens.",
        "authorize.case-sensitive": "Whether forward-auth rule prefixes match paths case for case; set it only when the app behind the proxy routes "
            + "case-sensitively.",
        "authorize.proxy": "Which proxy calls `GET /api/v1/authorize`, so which headers name the original request: `nginx` (`X-Original-Method`, "
            + "`X-Original-URI`) or `traefik` (`X-Forwarded-Method`, `X-Forwarded-Uri`).",
        "authorize.routes": "Forward-auth rules, comma-separated, first match wins, no match is 403: `<METHOD or *> <path prefix> <kind> [<meter>] "
            + "[token=query]`, the kind being public, device, bearer or user.",
        "backend.service-key": "Secret, never shown: the Bearer key the app's own server presents to the backend API "
            + "(`/api/v1/backend/users/{id}`), audited as `backend`; with no backend key those routes answer 404.",
        "backend.service-keys": "Secret, never shown; in a configuration file only: the app backend's Bearer keys as a JSON array of "
            + "`{\"name\", \"key\"}` (names unique, keys of 32 characters or more), several so keys can be rotated; the audit log names the key.",
        "budgets.default-limit": "The usage every user's budget allows per `budgets.period` unless support set another, in the units app backends "
            + "record with `POST /api/v1/usage`.",
        "budgets.period": "Seconds of the rolling period a budget counts usage over; older usage no longer counts.",
        "cache.capacity": "Verified access tokens the verification cache holds at most (entries).",
        "cache.ceiling": "Seconds a verified token is answered from the cache, without ES256 or a database lookup, before it is checked again "
            + "(never past its `exp`).",
        "cache.profile-capacity": "Profiles (`users/me`, `auth/me`) the profile cache holds at most; 0 keeps none.",
        "cache.profile-ttl": "Seconds `users/me` and `auth/me` may answer from a profile read before (0 to 60); 0 turns the profile cache off. This "
            + "process's own writes drop a profile at once.",
        "claims.max-bytes": "The most a user's `app_metadata` and the claims hook's claims may each take, in bytes of compact JSON; larger "
            + "`app_metadata` is refused (400), a larger hook answer counts as a failed hook.",
        "database": "Secret, never shown (a URL may hold a password): an SQLite file path, or a `postgres://user:password@host:port/db` URL that "
            + "several processes can share; migrated at every start.",
        "database.max-connections": "PostgreSQL only: connections each process uses for requests; it holds two more that LISTEN (the revocation and "
            + "user-change feeds).",
        "database.timeout": "Seconds one database operation may take, waiting for a connection (PostgreSQL) or the single writer (SQLite) included; "
            + "past it the request answers 503. Start-up migrations are not bound by it.",
        "email.app-name": "The sender's display name and the app's name in the mails (`{{app_name}}`).",
        "email.from": "The sender address of every mail; required with `smtp.host`.",
        "email.link-base-url": "Where the mails' links point (http or https), e.g. the app's universal-link domain; unset: the server's public URL.",
        "email.max-attempts": "Delivery attempts of one mail; after the last it stays in the outbox as failed, for `latchkey outbox retry`. At "
            + "least 1.",
        "email.poll-interval": "Seconds between outbox scans when nothing woke the sender.",
        "email.retry-interval": "Seconds before the first retry of a failed delivery, doubled at each retry up to an hour.",
        "email.reveal-existing": "Whether registering an address another account verified answers 422 `email_taken`; false answers 201 as for any "
            + "address and mails that address's owner instead.",
        "email.templates": "A directory of mail templates (`<purpose>.subject.txt`, `.txt`, `.html` for verify, reset, notice, signup-attempt) and "
            + "of the pages their links open (`verify-page.html`, `verified-page.html`, `reset-page.html`, `reset-done-page.html`, "
            + "`error-page.html`) that replace the built-in ones.",
        "events.max-sockets-per-client": "Open event sockets (`GET /api/v1/events`) per client IP, IPv6 per /64; more are refused with 429. At "
            + "least 1.",
        "events.max-sockets-per-user": "Open event sockets per user; one more closes the user's oldest with 4008 (`too_many_sockets`). At least 1.",
        "events.ping-interval": "Seconds between pings on an event socket; a client that does not answer within the next interval is dropped (1 to "
            + "3600).",
        "google.client-ids": "Sign in with Google's accepted `aud` values (a JSON array, or comma-separated): the app's iOS and web OAuth client "
            + "IDs; a token's `azp`, when present, must be one of them too. Empty turns Sign in with Google off (`POST /api/v1/auth/google` 404).",
        "google.hosted-domains": "Google Workspace domains (a JSON array, or comma-separated) whose accounts may sign in: a token's `hd` must be "
            + "one of them, and a consumer account's token (no `hd`) is refused. Empty: every Google account.",
        "google.jwks-url": "Where Google's public keys for ID tokens are fetched (https; http only for a loopback address); change it only to "
            + "point tests at a stand-in.",
        "google.leeway": "Seconds a Google ID token's `exp` may have passed, or its `iat` or `nbf` lie ahead, by this server's clock (0 to 3600).",
        "guest-audience": "The `aud` claim of guest tokens; must differ from `audience`. Unset: `<audience>:guest`.",
        "guest.features-disabled": "Features a guest token's response lists as disabled in its `limitations` (comma-separated), for the app to "
            + "honour; the server enforces none of them.",
        "guest.max-actions-per-day": "The actions a day a guest token's `limitations` report, and the guest limit of the default `actions` meter.",
        "hooks.claims.on-failure": "What a failed or slow claims hook does: `omit` issues the token without its claims (and counts "
            + "`latchkey_claims_hook_failures_total`), `refuse` answers 503 and changes nothing.",
        "hooks.claims.secret": "Secret, never shown: `whsec_` and base64 of 24 bytes or more, the Standard Webhooks key the claims hook's calls "
            + "are signed with; required with `hooks.claims.url`.",
        "hooks.claims.timeout": "Seconds the claims hook may take to answer before it counts as failed (`hooks.claims.on-failure` decides).",
        "hooks.claims.url": "The app's claims hook (https; http only for a loopback host): POSTed "
            + "`{user_id, kind, token_kind, identities, app_metadata, amr}` before every session access token is issued; its answer's `claims` are merged, reserved names dropped. Unset: no hook.",
        "host": "The address the server listens on: the API's port, and `admin.port` and `metrics.port` when set.",
        "http.cors.allowed-origins": "Exact browser origins (`https://app.example.com`) that may call the API cross-origin (CORS), never with "
            + "credentials; empty sends no CORS headers. The console never answers cross-origin.",
        "http.header-timeout": "Seconds from a request head's first byte to its end, on every port; a slower head is answered 408 and its "
            + "connection closed.",
        "http.idle-timeout": "Seconds a connection may sit idle before the server closes it.",
        "http.max-body-size": "The largest request body, in bytes; a larger one is answered 413.",
        "http.max-connections": "Open connections per listener (the API's port, `admin.port`, `metrics.port`, counted apart); one more is closed at "
            + "once, and logged. Keep it, times the listeners, below the file-descriptor limit.",
        "keys.publish-ahead": "Seconds a rotated signing key is published in the JWKS before it signs, so verifiers with a cached JWKS know its "
            + "`kid`; 0 signs at once.",
        "keys.reload-interval": "Seconds between reloads of the signing keys, so a key rotated elsewhere signs here too; a token with an unknown "
            + "`kid` triggers a reload at once.",
        "keys.retention": "Seconds a retired signing key stays in the JWKS and keeps verifying its tokens.",
        "limits.access-code-exchange.limit": "Access-code exchanges (`POST /api/v1/auth/access-code/exchange`) per client IP (IPv6 per /64) in the "
            + "window; 0 turns the limit off.",
        "limits.access-code-exchange.window": "Seconds of the rolling window of `limits.access-code-exchange`: a hit stops counting this long after "
            + "it was made.",
        "limits.assets.limit": "Asset requests (`GET /api/v1/assets`, `GET /api/v1/assets/url`) per device (`X-Device-ID`) in the window; 0 turns "
            + "the limit off.",
        "limits.assets.window": "Seconds of the rolling window of `limits.assets`: a hit stops counting this long after it was made.",
        "limits.email.limit": "Email-account requests (register, verify, resend, reset, confirm a reset) per client IP (IPv6 per /64) in the "
            + "window; 0 turns the limit off.",
        "limits.email.window": "Seconds of the rolling window of `limits.email`: a hit stops counting this long after it was made.",
        "limits.events.limit": "Upgrade attempts at `GET /api/v1/events` per client IP (IPv6 per /64) in the window; 0 turns the limit off.",
        "limits.events.window": "Seconds of the rolling window of `limits.events`: a hit stops counting this long after it was made.",
        "limits.guest-per-network": "Admitted guest actions a day on metered routes per client (an IPv4 address or IPv6 /64), across device IDs and "
            + "meters; 0 turns the limit off.",
        "limits.guest.limit": "Guest sign-ins (`POST /api/v1/auth/guest`) per client IP (IPv6 per /64) in the window; 0 turns the limit off.",
        "limits.guest.window": "Seconds of the rolling window of `limits.guest`: a hit stops counting this long after it was made.",
        "limits.login-failures.limit": "Failed password checks per account (app sign-ins and password changes; console sign-ins and re-entered "
            + "passwords) in the window, then 429 until the oldest leaves it; 0 turns the limit off.",
        "limits.login-failures.window": "Seconds of the rolling window of `limits.login-failures`: a hit stops counting this long after it was made.",
        "limits.mfa-failures.limit": "Wrong second-factor codes per user (sign-in verifies, confirmations and step-ups) in the window; past "
            + "it every verify of that user, the right code included, is 429 with `Retry-After`; 0 turns the limit off.",
        "limits.mfa-failures.window": "Seconds of the rolling window of `limits.mfa-failures`: a hit stops counting this long after it was made.",
        "limits.mfa-verify.limit": "`POST /api/v1/mfa/verify` per client IP (IPv6 per /64) in the window; 0 (the default) turns the limit off: "
            + "the per-`mfa_token` and per-user limits bound guessing.",
        "limits.mfa-verify.window": "Seconds of the rolling window of `limits.mfa-verify`: a hit stops counting this long after it was made.",
        "limits.mail-per-hour.limit": "Mails to one address in the window, whatever their purpose; past it a request still answers 202 but no mail "
            + "goes; 0 turns the limit off.",
        "limits.mail-per-hour.window": "Seconds of the rolling window of `limits.mail-per-hour`: a hit stops counting this long after it was made.",
        "limits.mail-per-minute.limit": "Mails to one address in the window, whatever their purpose; past it a request still answers 202 but no "
            + "mail goes; 0 turns the limit off.",
        "limits.mail-per-minute.window": "Seconds of the rolling window of `limits.mail-per-minute`: a hit stops counting this long after it was "
            + "made.",
        "limits.password-login.limit": "Password sign-in attempts (`POST /api/v1/auth/login`, the console's sign-in) per client IP (IPv6 per /64) "
            + "in the window; 0 turns the limit off.",
        "limits.password-login.window": "Seconds of the rolling window of `limits.password-login`: a hit stops counting this long after it was made.",
        "limits.app-attest-challenge.limit": "App Attest challenges (`POST /api/v1/app-attest/challenge`) per client IP (IPv6 per /64) in "
            + "the window; 0 turns the limit off.",
        "limits.app-attest-challenge.window": "Seconds of the rolling window of `limits.app-attest-challenge`.",
        "limits.app-attest.limit": "App Attest attestations per key ID and, apart, per client IP (IPv6 per /64), assertions per client IP, "
            + "in the window; never globally; 0 turns the limit off.",
        "limits.app-attest.window": "Seconds of the rolling window of `limits.app-attest`.",
        "limits.passkeys.limit": "Passkey options (`POST /api/v1/passkeys/register/options`, `POST /api/v1/passkeys/authenticate/options`) and "
            + "sign-ins (`POST /api/v1/passkeys/authenticate`) together per client IP (IPv6 per /64) in the window; 0 turns the limit off.",
        "limits.passkeys.window": "Seconds of the rolling window of `limits.passkeys`: a hit stops counting this long after it was made.",
        "limits.refresh-failures.limit": "Failed refreshes (malformed, unknown, expired, revoked or reused tokens) per client IP (IPv6 per /64) in "
            + "the window; over it a token this server issued is still tried; 0 turns the limit off.",
        "limits.refresh-failures.window": "Seconds of the rolling window of `limits.refresh-failures`: a hit stops counting this long after it was "
            + "made.",
        "limits.refresh.limit": "Successful refreshes per session in the window (only successes count: a session ID is no secret); 0 turns the "
            + "limit off.",
        "limits.refresh.window": "Seconds of the rolling window of `limits.refresh`: a hit stops counting this long after it was made.",
        "limits.register-device.limit": "Device registrations (`POST /api/v1/auth/register-device`) per client IP (IPv6 per /64) in the window; 0 "
            + "turns the limit off.",
        "limits.register-device.window": "Seconds of the rolling window of `limits.register-device`: a hit stops counting this long after it was "
            + "made.",
        "limits.register-user.limit": "User registrations (`POST /api/v1/users/register`) per client IP (IPv6 per /64) in the window; 0 turns the "
            + "limit off.",
        "limits.register-user.window": "Seconds of the rolling window of `limits.register-user`: a hit stops counting this long after it was made.",
        "limits.sign-in.limit": "Sign in with Apple, Sign in with Google and token exchanges (`POST /api/v1/auth/apple`, "
            + "`POST /api/v1/auth/google`, `POST /api/v1/auth/token-exchange`) together per client IP (IPv6 per /64) in the window; 0 turns the limit off.",
        "limits.sign-in.window": "Seconds of the rolling window of `limits.sign-in`: a hit stops counting this long after it was made.",
        "limits.trusted-proxies": "IP addresses (comma-separated) whose `X-Forwarded-For` is believed to name the client; also the only callers "
            + "`GET /api/v1/authorize` answers.",
        "log-level": "The least severe log level written: trace, debug, info, notice, warning, error or critical.",
        "master-key": "Secret, never shown: base64 of 32 bytes that seals signing keys and other secrets at rest; PostgreSQL needs it or "
            + "`master-key-file`, the same on every process.",
        "master-key-file": "A file holding the master key, created (mode 0600) when missing; one others can read is refused. Unset with SQLite and "
            + "no `master-key`: `<database>.key`.",
        "meters.<name>.guest-limit": "Requests a guest may make on meter `<name>`'s routes per window, counted per client IP and device ID; 0: "
            + "unlimited.",
        "meters.<name>.user-limit": "Requests a signed-in user may make on meter `<name>`'s routes per window, counted per user; 0: unlimited.",
        "meters.<name>.window": "Seconds of meter `<name>`'s rolling window.",
        "meters.names": "The meters for an app's own routes (comma-separated), for `MeterMiddleware` and forward-auth rules; each is set under "
            + "`meters.<name>.`.",
        "metrics.port": "Serve `GET /metrics` on this port of `host` instead of the API's port, so it can be firewalled apart; with neither this "
            + "nor `metrics.token` it is not served (404).",
        "metrics.token": "Secret, never shown: `GET /metrics` then needs `Authorization: Bearer <token>`; with neither this nor `metrics.port` it "
            + "is not served (404).",
        "mfa.issuer": "The issuer an authenticator app shows beside the account (the `otpauth://` URI's); unset: `email.app-name`.",
        "mfa.step-up-lifetime": "Seconds a second factor proved by a session (at sign-in or by a step-up) lets it do sensitive actions "
            + "(delete the account, change the password, unlink a way to sign in, add or remove a factor, new recovery codes) for a user "
            + "who has a factor; after that 403 `aal2_required` until it steps up again.",
        "passwords.argon2-iterations": "Argon2id passes of new password hashes (1 to 10); below OWASP's value the server warns. Hashes at other "
            + "parameters are replaced at the next sign-in.",
        "passwords.argon2-memory": "Argon2id memory of new password hashes, in KiB (8 to 1048576); below OWASP's value the server warns. Hashes at "
            + "other parameters are replaced at the next sign-in.",
        "passwords.hashing-threads": "Threads that hash passwords, at a lower priority and never on an event loop (1 to 256); unset, it follows the "
            + "machine's cores.",
        "passwords.queue-limit": "Password hashes that may wait for a thread; past them the answer is 503 with `Retry-After`, so a sign-in flood "
            + "cannot starve token verification.",
        "port": "The API's port on `host`; 0 takes any free port.",
        "providers.<name>.algorithms": "Accepted `alg` values of provider `<name>`'s tokens (comma-separated).",
        "providers.<name>.audiences": "Required: accepted `aud` values (comma-separated), one of which a token must carry; or `any` to accept every "
            + "audience (Clerk), which needs `authorized-parties`.",
        "providers.<name>.authorized-parties": "Accepted `azp` values: with `audiences` `any` every token must carry one; with named audiences an "
            + "`azp` a token carries must be one (native clients may omit it).",
        "providers.<name>.issuer": "Required: the exact `iss` of provider `<name>`'s tokens; it must differ from Latchkey's, Apple's, Google's "
            + "(with `google.client-ids`) and other providers'.",
        "providers.<name>.jwks-url": "Where provider `<name>`'s public keys are fetched (https; http only for a loopback address; redirects never "
            + "followed); this or `public-key` is required.",
        "providers.<name>.leeway": "Seconds a provider token's `iat` or `nbf` may lie ahead of this server's clock.",
        "providers.<name>.public-key": "A PEM RSA public key that verifies provider `<name>`'s tokens, instead of `jwks-url`.",
        "providers.<name>.subject-claim": "The claim that identifies the user at provider `<name>`.",
        "providers.<name>.token-type": "The `typ` header provider `<name>`'s tokens must carry exactly; unset, a `typ` other than `JWT` or `at+jwt` "
            + "is refused.",
        "providers.names": "Third-party identity providers (Clerk, any OIDC issuer) whose tokens are accepted as Bearer tokens (comma-separated; "
            + "`apple`, `google` and `latchkey` are reserved); each is set under `providers.<name>.`.",
        "passkeys.apple-app-ids": "The apps (`TEAMID.bundle.id`, a JSON array or comma-separated) whose passkeys are this site's: "
            + "`GET /.well-known/apple-app-site-association` lists them under `webcredentials` for iOS's Associated Domains.",
        "passkeys.challenge-lifetime": "Seconds a passkey ceremony's challenge may be answered (once) after its options were issued.",
        "passkeys.origins": "The origins a passkey ceremony's `clientDataJSON.origin` may name (a JSON array or comma-separated: "
            + "`https://host[:port]`, `http://localhost[:port]`, `android:apk-key-hash:…`); unset: `https://<rp-id>`.",
        "passkeys.rp-id": "The relying party ID passkeys are made for: this site's domain (`example.com`, `localhost`), no scheme or port; "
            + "unset, passkeys are off and every passkey route answers 404 `passkeys_disabled`.",
        "passkeys.rp-name": "The name an authenticator shows beside a passkey; unset: `email.app-name`.",
        "passkeys.timeout": "Seconds the ceremony's options tell the browser or device to wait for the person (sent in milliseconds).",
        "passkeys.user-verification": "`required`: a passkey must verify the person (Face ID, a PIN) and signs in at `aal2`; `preferred`: "
            + "one without it signs in as one factor (`amr` `hwk`), held back by a second factor the user has.",
        "prune.interval": "Seconds between pruning passes, which remove rows that no longer decide anything (old rate-limit hits, dead refresh "
            + "tokens, spent nonces, old revocation-feed entries).",
        "prune.sent-mail-after": "Seconds a sent mail stays in the outbox (`latchkey outbox list`) before it is pruned; failed and pending mails "
            + "stay.",
        "prune.unverified-accounts-after": "Seconds an address registered without a session stays unverified before it is pruned, with the user "
            + "made for it when nothing else hangs on that user.",
        "public-url": "The token issuer (`iss`) and base of the JWKS URL: the address clients reach the server at. Unset: `http://<host>:<port>`.",
        "revocations.poll-interval": "Seconds between reads of revocations made by other processes (the CLI, other servers); on PostgreSQL they are "
            + "also read at once when notified.",
        "smtp.ca-file": "A PEM file of the CA certificates the relay's certificate may chain to, instead of the system's.",
        "smtp.helo-name": "This host's name in EHLO: its fully qualified domain name (some relays refuse `localhost`).",
        "smtp.host": "The SMTP relay's host name or address; setting it turns email and password accounts on (without it their routes answer 404).",
        "smtp.password": "Secret, never logged nor shown in an error: the relay account's password; required with `smtp.username`.",
        "smtp.port": "The relay's port; unset: 587 with `starttls`, 465 with `tls`, 25 with `none`.",
        "smtp.timeout": "Seconds one delivery may take, from connecting to the relay's reply to the message (each command at most 30).",
        "smtp.tls": "How the relay connection is encrypted: `starttls` (required upgrade), `tls` (TLS from the first byte) or `none` (a local relay "
            + "only).",
        "smtp.username": "The account to authenticate to the relay as (AUTH PLAIN or LOGIN); empty: no authentication.",
        "storage.access-key-id": "The access key that calls STS and signs presigned URLs and asset listings; required with `storage.bucket`.",
        "storage.actions": "The S3 actions (comma-separated, such as `s3:GetObject`) vended credentials allow in the user's folder, besides "
            + "`s3:ListBucket` limited to it.",
        "storage.allowed-content-types": "The `Content-Type`s a presigned PUT may be signed with (comma-separated `type/subtype` or `type/*`); "
            + "others are 400.",
        "storage.assets-prefix": "The folder `GET /api/v1/assets` lists, ending with `/` (e.g. `assets/`); unset, the asset routes answer 404.",
        "storage.bucket": "The bucket; setting it turns storage credentials, presigned URLs and assets on (without it their routes answer 404).",
        "storage.duration": "Seconds vended S3 credentials last (900 to 43200).",
        "storage.endpoint": "The S3 endpoint; an S3-compatible store (SeaweedFS, MinIO, Ceph RGW) is addressed path-style. Unset: AWS's regional "
            + "endpoint.",
        "storage.presign-lifetime": "Seconds a presigned URL works (1 to 604800).",
        "storage.region": "The signing region, also part of AWS's default S3 and STS endpoints.",
        "storage.role-arn": "The IAM role vended credentials assume; required with `storage.bucket`.",
        "storage.secret-access-key": "Secret, never logged nor shown in an error: the secret of `storage.access-key-id`.",
        "storage.sts-endpoint": "Where `AssumeRole` goes (SeaweedFS: the S3 endpoint); unset: AWS's regional STS endpoint.",
        "storage.timeout": "Seconds an STS or S3 call may take; past it the answer is 502.",
        "storage.user-prefix": "The only folder a user's credentials and URLs reach: must contain `{user_id}`, end with `/` and not start with `/`.",
        "tokens.access-code-lifetime": "Seconds an access code issued without `--expires-in` stays valid.",
        "tokens.dpop": "`bound`: sessions started with a DPoP proof need one for every refresh, keyless clients work as before; `required`: every "
            + "sign-in and refresh needs a proof.",
        "tokens.guest-lifetime": "Seconds a guest access token is valid.",
        "tokens.recent-authentication": "Linking or unlinking a way to sign in and deleting the account need a session begun within this many "
            + "seconds, or a fresh DPoP proof with its key.",
        "tokens.refresh-grace": "Seconds after a refresh token's first use within which presenting it again gets the chain's current token instead "
            + "of revoking the session; 0: no grace.",
        "tokens.refresh-lifetime": "Seconds a refresh token may go unused before it expires.",
        "tokens.session-lifetime": "Seconds a session's access token is valid (device sign-in, refresh, exchanges).",
        "usage.service-key": "Secret, never shown: the Bearer key app backends present to `POST /api/v1/usage` to record usage; unset, that "
            + "endpoint answers 403.",
        "webhooks.endpoints": "Secret, never shown; in a configuration file only: the receivers of signed webhooks, a JSON array of "
            + "`{\"name\", \"url\", \"secret\", \"events\"}`: a unique name, an https URL (http only for a loopback host), `whsec_` and "
            + "base64 of 24 bytes or more (`latchkey webhooks secret`), and the event types it gets (`[\"*\"]`: all).",
        "webhooks.retry-schedule": "Seconds to wait after each failed delivery attempt before the next (the n-th after the n-th failure; the "
            + "first attempt is at once); once it is used up the delivery is `failed`.",
        "webhooks.timeout": "Seconds one delivery attempt may take; past it the attempt failed and is retried.",
    ]
}
