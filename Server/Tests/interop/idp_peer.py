#!/usr/bin/env python3
"""A local stand-in for Sign in with Apple, Sign in with Google and a Clerk-like OIDC issuer, for Latchkey's tests.

Usage: idp_peer.py PORT        (listens on 127.0.0.1:PORT only; prints "ready" once listening)

Every key is generated in memory at start; nothing is written to disk. Runs until killed.

Keys:
  apple-1, apple-2   RSA-2048, published at /auth/keys
  rogue              RSA-2048, never published (forged signatures)
  apple-es           EC P-256, never published (ES256 tokens for algorithm-confusion tests)
  clerk-1            RSA-2048, published at /clerk/.well-known/jwks.json
  google-1, google-2 RSA-2048, published at /google/oauth2/v3/certs
  developer key      EC P-256, the app developer's Sign in with Apple ".p8" (key id KEY1234567,
                     team id TEAM123456); /auth/token and /auth/revoke accept client secrets signed with it

Apple's endpoints:
  GET  /auth/keys                      Apple's JWKS (fetches are counted)
  POST /auth/token                     form: client_id, client_secret, code, grant_type[, redirect_uri]
  POST /auth/revoke                    form: client_id, client_secret, token[, token_type_hint]
Google's endpoint (the issuer is Google's own, https://accounts.google.com: the server under test only
learns where the keys are, through google.jwks-url):
  GET  /google/oauth2/v3/certs         Google's JWKS (fetches are counted, per ?tag= too)
Clerk's endpoint:
  GET  /clerk/.well-known/jwks.json    Clerk's JWKS (fetches are counted); issuer http://127.0.0.1:PORT/clerk
  GET  /down/.well-known/jwks.json     a provider whose JWKS answers 503 (fetches are counted per ?tag=)
Test controls:
  GET  /test/stats[?tag=T]             {"apple_jwks_fetches": n, "clerk_jwks_fetches": n, "google_jwks_fetches": n
                                        [, "tag_fetches": n]}
                                       (JWKS fetched as /auth/keys?tag=T are counted per tag too)
  GET  /test/developer-key             {"team_id", "key_id", "private_key_pem"} (PKCS#8 PEM)
  GET  /test/developer-key.pem         the same private key as a PEM file (for a server's apple.private-key-file)
  GET  /test/public-key?kid=K          {"kid", "pem"}: the public key K as PEM
  POST /test/mint/apple                {"claims", "omit", "kid", "sign_with", "alg"} -> {"token"}
  POST /test/mint/google               {"claims", "omit", "kid", "sign_with", "alg"} -> {"token"}
  POST /test/mint/clerk                {"claims", "omit", "kid", "sign_with"} -> {"token"}
  POST /test/codes                     {"code", "sub", "client_id"[, "claims"]} -> {} (single-use code)
  GET  /test/revoked                   {"revoked": [{"token", "client_id", "token_type_hint", "known", "sub"}, ...]}
  POST /test/reset                     forgets codes, issued refresh tokens, revocations and fetch counts

Minting (/test/mint/apple): "alg" picks how the token is signed (default RS256):
  RS256  with the RSA key named by "sign_with" (apple-1 | apple-2 | rogue; default apple-1)
  ES256  with apple-es, whatever "sign_with" says
  HS256  the classic confusion forgery: HMAC-SHA256 keyed with the PEM text (SubjectPublicKeyInfo,
         trailing newline included) of the public key named by "sign_with" (default apple-1)
  none   "header.payload." with an empty signature
/test/mint/google signs the same way, its RSA keys google-1 | google-2 | rogue (default google-1); its default
claims are a Google ID token's (iss https://accounts.google.com, aud and azp 1234567890-ios.apps.googleusercontent.com,
email_verified true, valid an hour) and carry no nonce unless "claims" gives one.
The header is {"alg": alg, "kid": kid}; "kid" defaults to "sign_with" (default apple-1), and an explicit
"kid": null leaves the kid out. "claims" overrides/extends the default claims, then "omit" removes names.

Client secrets are checked as Apple does (ES256, kid KEY1234567, signed with the .p8 key, iss TEAM123456,
sub == client_id, aud https://appleid.apple.com, integer iat < exp <= iat + 15777000) but never against
the wall clock: the server under test may run on a manual clock months ahead.

Needs the standard library, joserfc and cryptography. Bad requests answer 400 {"error": "..."}.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from joserfc import jwt
from joserfc.errors import JoseError
from joserfc.jwk import ECKey, RSAKey

APPLE_ISSUER = "https://appleid.apple.com"
DEFAULT_CLIENT_ID = "com.example.app"
TEAM_ID = "TEAM123456"
DEVELOPER_KEY_ID = "KEY1234567"
MAX_SECRET_LIFETIME = 15777000  # seconds; Apple's limit on a client secret's exp - iat (about 6 months)

APPLE_PUBLISHED = ("apple-1", "apple-2")
APPLE_RSA = ("apple-1", "apple-2", "rogue")
APPLE_ALGS = ("RS256", "ES256", "HS256", "none")
GOOGLE_ISSUER = "https://accounts.google.com"
GOOGLE_CLIENT_ID = "1234567890-ios.apps.googleusercontent.com"
GOOGLE_PUBLISHED = ("google-1", "google-2")
GOOGLE_RSA = ("google-1", "google-2", "rogue")
CLERK_SIGNERS = ("clerk-1", "rogue")


class BadRequest(Exception):
    """Answered as 400 {"error": <message>}."""


def rsa_key(kid: str) -> RSAKey:
    return RSAKey.generate_key(2048, parameters={"kid": kid, "use": "sig", "alg": "RS256"})


def ec_key(kid: str) -> ECKey:
    return ECKey.generate_key("P-256", parameters={"kid": kid})


KEYS: dict[str, Any] = {
    "apple-1": rsa_key("apple-1"),
    "apple-2": rsa_key("apple-2"),
    "rogue": rsa_key("rogue"),
    "apple-es": ec_key("apple-es"),
    "clerk-1": rsa_key("clerk-1"),
    "google-1": rsa_key("google-1"),
    "google-2": rsa_key("google-2"),
}
DEVELOPER_KEY = ec_key(DEVELOPER_KEY_ID)

# Mutable state, guarded by LOCK.
LOCK = threading.Lock()
STATE: dict[str, Any] = {}


def reset_state() -> None:
    with LOCK:
        STATE.clear()
        STATE.update(apple_jwks_fetches=0, clerk_jwks_fetches=0, google_jwks_fetches=0, tagged_fetches={}, codes={}, refresh_tokens={}, revoked=[])


reset_state()


# --- JOSE helpers -----------------------------------------------------------------------------------

def b64url_encode(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def b64url_decode(part: str) -> bytes:
    return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))


def compact_json(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()


def public_jwk(kid: str) -> dict[str, Any]:
    public = KEYS[kid].as_dict(private=False)
    return {"kty": "RSA", "kid": kid, "use": "sig", "alg": "RS256", "n": public["n"], "e": public["e"]}


def public_pem(kid: str) -> bytes:
    return KEYS[kid].as_pem(private=False)


def sign_by_hand(header: dict[str, Any], claims: dict[str, Any], hmac_secret: bytes | None) -> str:
    """HS256 with the given secret, or alg "none" (empty signature) when hmac_secret is None."""
    signing_input = b64url_encode(compact_json(header)) + "." + b64url_encode(compact_json(claims))
    if hmac_secret is None:
        return signing_input + "."
    signature = hmac.new(hmac_secret, signing_input.encode(), hashlib.sha256).digest()
    return signing_input + "." + b64url_encode(signature)


def build_claims(defaults: dict[str, Any], body: dict[str, Any]) -> dict[str, Any]:
    overrides = body.get("claims", {})
    omit = body.get("omit", [])
    if not isinstance(overrides, dict):
        raise BadRequest("claims must be an object")
    if not isinstance(omit, list) or not all(isinstance(name, str) for name in omit):
        raise BadRequest("omit must be a list of claim names")
    claims = {**defaults, **overrides}
    for name in omit:
        claims.pop(name, None)
    return claims


def header_with_kid(alg: str, body: dict[str, Any], sign_with: str) -> dict[str, Any]:
    kid = body.get("kid", sign_with)
    if kid is not None and not isinstance(kid, str):
        raise BadRequest("kid must be a string or null")
    return {"alg": alg} if kid is None else {"alg": alg, "kid": kid}


def apple_default_claims(now: int) -> dict[str, Any]:
    return {
        "iss": APPLE_ISSUER,
        "aud": DEFAULT_CLIENT_ID,
        "sub": "001234.abcdef0123456789.0123",
        "iat": now,
        "exp": now + 600,
        "auth_time": now,
        "email": "user@privaterelay.appleid.com",
        "email_verified": "true",
        "is_private_email": "true",
        "nonce_supported": True,
    }


def mint_apple(body: dict[str, Any]) -> str:
    return mint_with(body, "apple-1", ("apple-1", "apple-2", "rogue", "apple-es"), APPLE_RSA,
                     apple_default_claims(int(time.time())))


def mint_with(body: dict[str, Any], default_key: str, keys: tuple[str, ...], rsa_keys: tuple[str, ...],
              defaults: dict[str, Any]) -> str:
    """A token of defaults (changed and pruned as body says) with body's alg, signed with sign_with, one of keys."""
    check_fields(body, {"claims", "omit", "kid", "sign_with", "alg"})
    alg = body.get("alg", "RS256")
    sign_with = body.get("sign_with", default_key)
    if alg not in APPLE_ALGS:
        raise BadRequest(f"alg must be one of {', '.join(APPLE_ALGS)}")
    if sign_with not in keys:
        raise BadRequest(f"sign_with must be one of {', '.join(keys)}")
    if alg == "RS256" and sign_with not in rsa_keys:
        raise BadRequest(f"RS256 needs an RSA key: sign_with one of {', '.join(rsa_keys)}")
    return sign_as(alg, header_with_kid(alg, body, sign_with), build_claims(defaults, body), sign_with)


def sign_as(alg: str, header: dict[str, Any], claims: dict[str, Any], sign_with: str) -> str:
    """RS256 with the RSA key sign_with, ES256 with apple-es, HS256 keyed with sign_with's public PEM, or none."""
    if alg == "RS256":
        return jwt.encode(header, claims, KEYS[sign_with], algorithms=["RS256"], default_type=None)
    if alg == "ES256":
        return jwt.encode(header, claims, KEYS["apple-es"], algorithms=["ES256"], default_type=None)
    if alg == "HS256":
        return sign_by_hand(header, claims, public_pem(sign_with))
    return sign_by_hand(header, claims, None)


def mint_google(body: dict[str, Any]) -> str:
    now = int(time.time())
    defaults = {
        "iss": GOOGLE_ISSUER,
        "aud": GOOGLE_CLIENT_ID,
        "azp": GOOGLE_CLIENT_ID,
        "sub": "110169484474386276334",
        "email": "person@example.com",
        "email_verified": True,
        "iat": now,
        "exp": now + 3600,
    }
    return mint_with(body, "google-1", GOOGLE_RSA, GOOGLE_RSA, defaults)


def clerk_issuer(port: int) -> str:
    return f"http://127.0.0.1:{port}/clerk"


def mint_clerk(body: dict[str, Any], port: int) -> str:
    check_fields(body, {"claims", "omit", "kid", "sign_with", "typ"})
    sign_with = body.get("sign_with", "clerk-1")
    if sign_with not in CLERK_SIGNERS:
        raise BadRequest("sign_with must be clerk-1 or rogue")
    now = int(time.time())
    defaults = {
        "iss": clerk_issuer(port),
        "sub": "user_2NNEqL2nrIRdJ194ndJqAHwEfxC",
        "azp": "https://app.example.com",
        "sid": "sess_2abc",
        "iat": now,
        "nbf": now - 5,
        "exp": now + 60,
    }
    claims = build_claims(defaults, body)
    header = header_with_kid("RS256", body, sign_with)
    if "typ" in body:  # a token of another JWT type (an ID token, a DPoP proof…), or none at all
        if body["typ"] is not None and not isinstance(body["typ"], str):
            raise BadRequest("typ must be a string or null")
        if body["typ"] is not None:
            header["typ"] = body["typ"]
        return jwt.encode(header, claims, KEYS[sign_with], algorithms=["RS256"], default_type=None)
    return jwt.encode(header, claims, KEYS[sign_with], algorithms=["RS256"])  # typ "JWT", as Clerk's


def is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def client_secret_ok(secret: str, client_id: str) -> bool:
    """Apple's checks on a client secret, except any comparison with the wall clock."""
    parts = secret.split(".")
    if len(parts) != 3:
        return False
    try:
        header = json.loads(b64url_decode(parts[0]))
    except (ValueError, UnicodeDecodeError):
        return False
    if not isinstance(header, dict) or header.get("alg") != "ES256" or header.get("kid") != DEVELOPER_KEY_ID:
        return False
    try:
        claims = jwt.decode(secret, DEVELOPER_KEY, algorithms=["ES256"]).claims
    except (JoseError, ValueError, TypeError):
        return False
    audience = claims.get("aud")
    audience_ok = audience == APPLE_ISSUER or (isinstance(audience, list) and APPLE_ISSUER in audience)
    iat, exp = claims.get("iat"), claims.get("exp")
    return (
        claims.get("iss") == TEAM_ID
        and bool(client_id)
        and claims.get("sub") == client_id
        and audience_ok
        and is_int(iat)
        and is_int(exp)
        and iat < exp <= iat + MAX_SECRET_LIFETIME
    )


def check_fields(body: dict[str, Any], allowed: set[str]) -> None:
    unknown = sorted(set(body) - allowed)
    if unknown:
        raise BadRequest(f"unknown field(s): {', '.join(unknown)}")


# --- Apple's token and revoke endpoints -------------------------------------------------------------

def exchange_code(form: dict[str, str]) -> dict[str, Any]:
    client_id = form.get("client_id", "")
    if not client_secret_ok(form.get("client_secret", ""), client_id):
        raise BadRequest("invalid_client")
    if form.get("grant_type") != "authorization_code":
        raise BadRequest("unsupported_grant_type")
    with LOCK:
        entry = STATE["codes"].get(form.get("code", ""))
        if entry is None or entry["client_id"] != client_id:
            raise BadRequest("invalid_grant")
        del STATE["codes"][form["code"]]
        refresh_token = "r-" + secrets.token_hex(32)
        STATE["refresh_tokens"][refresh_token] = entry["sub"]
    now = int(time.time())
    claims = {**apple_default_claims(now), "sub": entry["sub"], "aud": client_id, **entry["claims"]}
    id_token = jwt.encode({"alg": "RS256", "kid": "apple-1"}, claims, KEYS["apple-1"], algorithms=["RS256"], default_type=None)
    return {
        "access_token": "a-" + secrets.token_urlsafe(24),
        "token_type": "Bearer",
        "expires_in": 3600,
        "refresh_token": refresh_token,
        "id_token": id_token,
    }


def revoke(form: dict[str, str]) -> None:
    client_id = form.get("client_id", "")
    if not client_secret_ok(form.get("client_secret", ""), client_id):
        raise BadRequest("invalid_client")
    token = form.get("token", "")
    if not token:
        raise BadRequest("invalid_request")
    with LOCK:
        STATE["revoked"].append({
            "token": token,
            "client_id": client_id,
            "token_type_hint": form.get("token_type_hint"),
            "known": token in STATE["refresh_tokens"],
            "sub": STATE["refresh_tokens"].get(token),
        })


def register_code(body: dict[str, Any]) -> None:
    check_fields(body, {"code", "sub", "client_id", "claims"})
    code, sub = body.get("code"), body.get("sub")
    client_id = body.get("client_id", DEFAULT_CLIENT_ID)
    extra = body.get("claims", {})
    if not isinstance(code, str) or not code:
        raise BadRequest("code must be a non-empty string")
    if not isinstance(sub, str) or not sub:
        raise BadRequest("sub must be a non-empty string")
    if not isinstance(client_id, str) or not client_id:
        raise BadRequest("client_id must be a non-empty string")
    if not isinstance(extra, dict):
        raise BadRequest("claims must be an object")
    with LOCK:
        STATE["codes"][code] = {"sub": sub, "client_id": client_id, "claims": extra}


# --- HTTP -------------------------------------------------------------------------------------------

class Handler(BaseHTTPRequestHandler):
    def version_string(self) -> str:
        return "idp-peer"

    def send(self, status: int, body: Any = None, headers: dict[str, str] | None = None) -> None:
        raw = b"" if body is None else json.dumps(body).encode()
        self.send_response(status)
        if body is not None:
            self.send_header("Content-Type", "application/json")
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def read_body(self) -> bytes:
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError as error:
            raise BadRequest("bad Content-Length") from error
        if length < 0:
            raise BadRequest("bad Content-Length")
        return self.rfile.read(length) if length else b""

    def json_body(self) -> dict[str, Any]:
        raw = self.read_body()
        if not raw.strip():
            return {}
        try:
            body = json.loads(raw)
        except (ValueError, UnicodeDecodeError) as error:
            raise BadRequest("body is not JSON") from error
        if not isinstance(body, dict):
            raise BadRequest("body must be a JSON object")
        return body

    def form_body(self) -> dict[str, str]:
        raw = self.read_body()
        content_type = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
        if content_type != "application/x-www-form-urlencoded":
            raise BadRequest("invalid_request")
        try:
            pairs = urllib.parse.parse_qsl(raw.decode(), keep_blank_values=True, strict_parsing=False)
        except (UnicodeDecodeError, ValueError) as error:
            raise BadRequest("invalid_request") from error
        form: dict[str, str] = {}
        for name, value in pairs:
            form.setdefault(name, value)  # the first value wins
        return form

    def route(self, method: str) -> None:
        path = urllib.parse.urlsplit(self.path).path
        port = self.server.server_address[1]
        routes = {
            ("GET", "/auth/keys"): self.apple_keys,
            ("GET", "/clerk/.well-known/jwks.json"): self.clerk_keys,
            ("GET", "/google/oauth2/v3/certs"): self.google_keys,
            ("GET", "/down/.well-known/jwks.json"): self.down_keys,
            ("GET", "/moved/.well-known/jwks.json"): self.moved_keys,
            ("GET", "/test/stats"): self.stats,
            ("GET", "/test/developer-key"): self.developer_key,
            ("GET", "/test/developer-key.pem"): self.developer_key_pem,
            ("GET", "/test/public-key"): self.public_key,
            ("GET", "/test/revoked"): self.revoked,
            ("POST", "/test/mint/apple"): lambda: self.send(200, {"token": mint_apple(self.json_body())}),
            ("POST", "/test/mint/google"): lambda: self.send(200, {"token": mint_google(self.json_body())}),
            ("POST", "/test/mint/clerk"): lambda: self.send(200, {"token": mint_clerk(self.json_body(), port)}),
            ("POST", "/test/codes"): lambda: (register_code(self.json_body()), self.send(200, {})),
            ("POST", "/test/reset"): lambda: (self.read_body(), reset_state(), self.send(200, {})),
            ("POST", "/auth/token"): lambda: self.send(200, exchange_code(self.form_body()), {"Cache-Control": "no-store"}),
            ("POST", "/auth/revoke"): lambda: (revoke(self.form_body()), self.send(200)),
        }
        action = routes.get((method, path))
        try:
            if action is not None:
                action()
            elif any(known == path for _, known in routes):
                self.read_body()
                self.send(405, {"error": "method_not_allowed"})
            else:
                self.read_body()
                self.send(404, {"error": "not_found"})
        except BadRequest as error:
            self.send(400, {"error": str(error)})
        except Exception as error:  # keep serving; say what broke without echoing request data
            print(f"idp_peer: {method} {path}: {type(error).__name__}: {error}", file=sys.stderr, flush=True)
            self.send(500, {"error": "server_error"})

    def do_GET(self) -> None:
        self.route("GET")

    def do_POST(self) -> None:
        self.route("POST")

    def count_tag(self) -> None:
        """Fetches of a JWKS URL with ?tag=NAME are also counted per tag, so parallel tests count their own."""
        tag = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query).get("tag", [None])[0]
        if tag:
            with LOCK:
                STATE["tagged_fetches"][tag] = STATE["tagged_fetches"].get(tag, 0) + 1

    def apple_keys(self) -> None:
        self.count_tag()
        with LOCK:
            STATE["apple_jwks_fetches"] += 1
        keys = [public_jwk(kid) for kid in APPLE_PUBLISHED]
        self.send(200, {"keys": keys}, {"Cache-Control": "public, max-age=3600"})

    def clerk_keys(self) -> None:
        self.count_tag()
        with LOCK:
            STATE["clerk_jwks_fetches"] += 1
        self.send(200, {"keys": [public_jwk("clerk-1")]}, {"Cache-Control": "max-age=3600"})

    def google_keys(self) -> None:
        self.count_tag()
        with LOCK:
            STATE["google_jwks_fetches"] += 1
        keys = [public_jwk(kid) for kid in GOOGLE_PUBLISHED]
        self.send(200, {"keys": keys}, {"Cache-Control": "public, max-age=21600, must-revalidate, no-transform"})

    def down_keys(self) -> None:
        """A provider whose JWKS endpoint fails: counted per tag, answered 503."""
        self.count_tag()
        self.send(503, {"error": "unavailable"})

    def moved_keys(self) -> None:
        """A JWKS URL that redirects to Clerk's keys (same query, so the tag): a fetcher must not follow it."""
        query = urllib.parse.urlsplit(self.path).query
        self.send(302, {"moved": True}, {"Location": "/clerk/.well-known/jwks.json" + ("?" + query if query else "")})

    def stats(self) -> None:
        tag = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query).get("tag", [None])[0]
        with LOCK:
            body = {
                "apple_jwks_fetches": STATE["apple_jwks_fetches"],
                "clerk_jwks_fetches": STATE["clerk_jwks_fetches"],
                "google_jwks_fetches": STATE["google_jwks_fetches"],
            }
            if tag:
                body["tag_fetches"] = STATE["tagged_fetches"].get(tag, 0)
        self.send(200, body)

    def public_key(self) -> None:
        """The PEM public key of ?kid=NAME (for providers configured with a PEM key instead of a JWKS URL)."""
        kid = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query).get("kid", [""])[0]
        if kid not in KEYS:
            raise BadRequest("unknown kid")
        self.send(200, {"kid": kid, "pem": public_pem(kid).decode()})

    def developer_key(self) -> None:
        pem = DEVELOPER_KEY.as_pem(private=True).decode()
        self.send(200, {"team_id": TEAM_ID, "key_id": DEVELOPER_KEY_ID, "private_key_pem": pem})

    def developer_key_pem(self) -> None:
        raw = DEVELOPER_KEY.as_pem(private=True)
        self.send_response(200)
        self.send_header("Content-Type", "application/x-pem-file")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def revoked(self) -> None:
        with LOCK:
            entries = [dict(entry) for entry in STATE["revoked"]]
        self.send(200, {"revoked": entries})

    def log_message(self, *args: Any) -> None:
        pass  # never log request lines (they may carry codes and secrets)


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 64  # tests may open many connections at once


def main(argv: list[str]) -> int:
    if len(argv) != 2 or not argv[1].isdigit():
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    server = Server(("127.0.0.1", int(argv[1])), Handler)
    print("ready", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
