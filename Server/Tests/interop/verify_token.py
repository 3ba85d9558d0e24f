#!/usr/bin/env python3
"""Interop test: verify a Latchkey access token with a non-Swift JWT library.

Usage: verify_token.py BASE_URL        (e.g. http://127.0.0.1:8080)

What it does, as any other backend would:
  1. registers a fresh random device (POST /api/v1/auth/register-device);
  2. reads /.well-known/openid-configuration and fetches the JWKS from its `jwks_uri`;
  3. verifies the access token with joserfc (ES256 only), selecting the key by `kid`,
     and checks iss == BASE_URL, aud == "latchkey", sub == the device id, exp in the future;
  4. checks that the same token with one flipped signature byte is rejected, by joserfc and by
     the server's GET /api/v1/validate-token;
  5. asks for a guest token with the registered device's UUID in X-Device-ID and verifies it with PyJWT from
     the JWKS: a verifier expecting aud "latchkey" refuses it, and with the guest audience its `sub` is not the
     device's user ID (a device UUID travels in headers; knowing it must not make anyone that user).

Needs only the standard library, joserfc and PyJWT (installed by scripts/test into a throwaway venv).
Exits 0 when every check passes; otherwise prints what failed and exits 1.
Never prints a whole token or secret.
"""

from __future__ import annotations

import base64
import json
import sys
import time
import urllib.error
import urllib.request
import uuid
from typing import Any

import jwt as pyjwt
from joserfc import jwt
from joserfc.errors import BadSignatureError, JoseError
from joserfc.jwk import KeySet

AUDIENCE = "latchkey"
TIMEOUT = 10  # seconds per HTTP request


class CheckFailed(Exception):
    pass


failures: list[str] = []


def check(condition: bool, message: str) -> None:
    if condition:
        print(f"  ok   {message}")
    else:
        print(f"  FAIL {message}")
        failures.append(message)


def http(method: str, url: str, body: Any = None, headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
    data = None
    all_headers = {"Accept": "application/json"}
    if body is not None:
        data = json.dumps(body).encode()
        all_headers["Content-Type"] = "application/json"
    all_headers.update(headers or {})
    request = urllib.request.Request(url, data=data, method=method, headers=all_headers)
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()
    except (urllib.error.URLError, OSError) as error:
        raise CheckFailed(f"{method} {url}: cannot connect: {error}") from error


def get_json(method: str, url: str, expect: int, body: Any = None, headers: dict[str, str] | None = None) -> Any:
    status, _, raw = http(method, url, body, headers)
    if status != expect:
        raise CheckFailed(f"{method} {url}: expected {expect}, got {status}: {raw[:500]!r}")
    try:
        return json.loads(raw)
    except ValueError as error:
        raise CheckFailed(f"{method} {url}: body is not JSON: {raw[:500]!r}") from error


def b64url_decode(part: str) -> bytes:
    return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))


def b64url_encode(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def flip_signature_byte(token: str) -> str:
    header, payload, signature = token.split(".")
    raw = bytearray(b64url_decode(signature))
    raw[len(raw) // 2] ^= 0x01
    return ".".join([header, payload, b64url_encode(bytes(raw))])


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    base = argv[1].rstrip("/")
    print(f"interop: verifying Latchkey tokens from {base} with joserfc")

    # 1. A fresh device.
    device_id = str(uuid.uuid4())
    pair = get_json("POST", f"{base}/api/v1/auth/register-device", 201, {"device_id": device_id})
    for field in ("access_token", "token_type", "expires_in", "refresh_token", "user_id", "session_id", "device_secret"):
        check(field in pair, f"register-device answer has `{field}`")
    check(pair.get("token_type") == "Bearer", "token_type is Bearer")
    access_token = pair.get("access_token")
    if not isinstance(access_token, str) or access_token.count(".") != 2:
        raise CheckFailed("register-device did not return a compact JWS access token")

    # 2. Discovery and JWKS, exactly as a stock client finds them.
    discovery = get_json("GET", f"{base}/.well-known/openid-configuration", 200)
    check(discovery.get("issuer") == base, f"openid-configuration issuer is {base!r} (got {discovery.get('issuer')!r})")
    jwks_uri = discovery.get("jwks_uri")
    if not isinstance(jwks_uri, str) or not jwks_uri:
        raise CheckFailed(f"openid-configuration has no jwks_uri: {discovery!r}")
    check(jwks_uri.startswith(base + "/"), f"jwks_uri {jwks_uri!r} lies under the base URL")
    jwks = get_json("GET", jwks_uri, 200)
    keys = jwks.get("keys") if isinstance(jwks, dict) else None
    if not isinstance(keys, list) or not keys:
        raise CheckFailed(f"JWKS has no keys: {jwks!r}")
    for key in keys:
        kid = key.get("kid")
        check(bool(kid), f"JWKS key {kid!r} has a kid")
        check("d" not in key, f"JWKS key {kid!r} exposes no private part")
        if key.get("kty") == "EC":
            check(key.get("crv") == "P-256", f"JWKS key {kid!r} is on P-256")
    key_set = KeySet.import_key_set(jwks)

    # 3. Verify with joserfc.
    header_seen = json.loads(b64url_decode(access_token.split(".")[0]))
    check(header_seen.get("alg") == "ES256", f"token header alg is ES256 (got {header_seen.get('alg')!r})")
    kid = header_seen.get("kid")
    check(bool(kid), "token header has a kid")
    check(any(k.get("kid") == kid for k in keys), f"token kid {kid!r} is listed in the JWKS")
    try:
        token = jwt.decode(access_token, key_set, algorithms=["ES256"])
    except JoseError as error:
        raise CheckFailed(f"joserfc rejected the access token: {type(error).__name__}: {error}") from error
    print("  ok   joserfc verified the ES256 signature against the JWKS")
    claims = token.claims
    registry = jwt.JWTClaimsRegistry(
        leeway=5,
        iss={"essential": True, "value": base},
        aud={"essential": True, "value": AUDIENCE},
        sub={"essential": True},
        exp={"essential": True},
        iat={"essential": True},
        nbf={"essential": True},
        jti={"essential": True},
    )
    try:
        registry.validate(claims)
        print("  ok   joserfc validated iss, aud, sub, exp, nbf, iat, jti")
    except JoseError as error:
        check(False, f"joserfc claim validation: {type(error).__name__}: {error} (claims {sorted(claims)})")
    now = time.time()
    check(claims.get("iss") == base, f"iss == {base!r} (got {claims.get('iss')!r})")
    aud = claims.get("aud")
    check(aud == AUDIENCE or (isinstance(aud, list) and AUDIENCE in aud), f"aud contains {AUDIENCE!r} (got {aud!r})")
    sub = claims.get("sub")
    check(isinstance(sub, str) and sub.lower() == device_id.lower(), f"sub == device id {device_id} (got {sub!r})")
    if isinstance(sub, str) and sub != device_id and sub.lower() == device_id.lower():
        print(f"  WARN sub differs from the device id sent only in letter case ({sub!r} vs {device_id!r})")
    exp = claims.get("exp")
    check(isinstance(exp, (int, float)) and exp > now, f"exp lies in the future (exp={exp!r}, now={int(now)})")
    check(isinstance(claims.get("sid"), str) and bool(claims.get("sid")), "sid claim present")
    if "session_id" in pair:
        check(claims.get("sid") == pair["session_id"], "sid == session_id from register-device")
    check(claims.get("kind") == "session", f"kind == 'session' (got {claims.get('kind')!r})")
    did = claims.get("did")
    check(isinstance(did, str) and did.lower() == device_id.lower(), f"did == device id (got {did!r})")

    # 4. A token with one flipped signature byte must fail, in joserfc and on the server.
    forged = flip_signature_byte(access_token)
    try:
        jwt.decode(forged, key_set, algorithms=["ES256"])
        check(False, "joserfc rejects a token with one flipped signature byte")
    except BadSignatureError:
        check(True, "joserfc rejects a token with one flipped signature byte")
    except JoseError as error:
        check(False, f"joserfc rejects the forged token with BadSignatureError (got {type(error).__name__})")

    status, _, raw = http("GET", f"{base}/api/v1/validate-token", headers={"Authorization": f"Bearer {access_token}"})
    check(status == 200, f"server accepts the genuine token on validate-token (got {status})")
    if status == 200:
        body = json.loads(raw)
        check(body.get("valid") is True, f"validate-token says valid: true (got {body.get('valid')!r})")
    status, headers, raw = http("GET", f"{base}/api/v1/validate-token", headers={"Authorization": f"Bearer {forged}"})
    check(status == 401, f"server rejects the forged token on validate-token with 401 (got {status})")

    # 5. A guest token for the registered device, verified by PyJWT from the JWKS.
    check(header_seen.get("typ") == "at+jwt", f"access tokens are typed at+jwt (RFC 9068) (got {header_seen.get('typ')!r})")
    guest = get_json("POST", f"{base}/api/v1/auth/guest", 201, headers={"X-Device-ID": device_id})["access_token"]
    signing_key = pyjwt.PyJWKClient(jwks_uri).get_signing_key_from_jwt(guest).key
    try:
        pyjwt.decode(guest, signing_key, algorithms=["ES256"], audience=AUDIENCE, issuer=base)
        check(False, "PyJWT expecting aud 'latchkey' refuses a guest token")
    except pyjwt.InvalidAudienceError:
        check(True, "PyJWT expecting aud 'latchkey' refuses a guest token")
    guest_claims = pyjwt.decode(guest, signing_key, algorithms=["ES256"], audience=AUDIENCE + ":guest", issuer=base)
    check(guest_claims.get("sub") != device_id and guest_claims.get("sub", "").lower() != device_id.lower(),
          f"the guest token's sub is not the device's user ID (got {guest_claims.get('sub')!r})")
    check(guest_claims.get("did") == device_id.lower(), "the guest token names the device in did")
    check(guest_claims.get("kind") == "guest", "the guest token's kind is guest")
    validation = get_json("GET", f"{base}/api/v1/validate-token", 200, headers={"Authorization": f"Bearer {guest}"})
    check(validation.get("sub") != device_id.lower(), f"validate-token does not give the guest the user's ID (got {validation.get('sub')!r})")

    return 0


if __name__ == "__main__":
    try:
        code = main(sys.argv)
    except CheckFailed as error:
        failures.append(str(error))
        print(f"  FAIL {error}")
        code = 1
    if code == 0 and failures:
        code = 1
    if code == 0:
        print("interop: all checks passed")
    elif code == 1:
        print(f"interop: {len(failures)} check(s) failed:", file=sys.stderr)
        for failure in failures:
            print(f"  - {failure}", file=sys.stderr)
    sys.exit(code)
