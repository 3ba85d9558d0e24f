#!/usr/bin/env python3
"""Interop test: second factors (issue 32) driven by an independent TOTP implementation, PyPI's pyotp.

Usage: mfa_interop.py BASE_URL        (e.g. http://127.0.0.1:8080)

The live server must have email accounts on, mailing through Server/Tests/interop/smtp_peer.py, whose ready JSON is in
LATCHKEY_TEST_SMTP_PEER (scripts/test sets both up); the verification code is read from the peer's HTTP API.

What it does, as an app with an authenticator app beside it would:
  1. registers a fresh address, verifies it with the mailed code, and signs in twice (sessions A and B, both aal1);
  2. enrols a TOTP factor with A (201: factor_id, secret, otpauth_uri); pyotp reads the otpauth URI;
  3. confirms it with pyotp's code (200: ten recovery codes XXXXX-XXXXX);
  4. a password login is 403 mfa_required with an mfa_token and the factor, and no tokens;
  5. verifies the mfa_token with pyotp's code: a token pair whose access token (decoded) says aal2, amr ["pwd", "otp"];
  6. the same code on a new mfa_token is refused (400 invalid_code);
  7. a recovery code finishes a sign-in (aal2, amr ["pwd", "recovery"]) once; again it is 400 invalid_code;
  8. B (aal1) asking for new recovery codes is 403 aal2_required; B steps up with pyotp's code (POST /api/v1/mfa/verify
     {code} with its Bearer: a new pair of the same session at aal2) and then gets them;
  9. five wrong codes spend an mfa_token: the sixth attempt, with an unused recovery code, is 401 invalid_mfa_token.

The TOTP steps used only go up (confirm, verify, step-up on three consecutive steps, the first one behind the clock),
so the run needs no wait for a new step beyond lining up with one at the start (at most 10 s).

Needs the standard library and pyotp (installed by scripts/test into a throwaway venv). Exits 0 when every check
passes; otherwise prints what failed and exits 1. Never prints a token, a secret or a code.
"""

from __future__ import annotations

import base64
import email
import email.policy
import json
import os
import re
import sys
import time
import urllib.error
import urllib.parse
import uuid
from typing import Any

import pyotp
from interop_checks import RESULTS
from interop_checks import bearer as bearer_header
from interop_checks import call as shared_call
from interop_checks import check as shared_check

TIMEOUT = 20  # seconds per HTTP request (a login hashes a password)
PASSWORD = "correct horse battery staple"
PERIOD = 30
RECOVERY_CODE = re.compile(r"^[A-Z2-7]{5}-[A-Z2-7]{5}$")


class CheckFailed(Exception):
    pass


def check(condition: bool, message: str) -> None:
    shared_check(message, condition)


def call(method: str, url: str, body: Any = None, bearer: str | None = None) -> tuple[int, Any]:
    """The status and the JSON body (None when the body is not JSON)."""
    headers = {"Accept": "application/json", **(bearer_header(bearer) if bearer is not None else {})}
    try:
        status, answer = shared_call(method, url, headers=headers, json_body=body, timeout=TIMEOUT)
    except (urllib.error.URLError, OSError) as error:
        raise CheckFailed(f"{method} {url}: cannot connect: {error}") from error
    except ValueError:
        return 0, None  # a JSON content type whose body does not parse: no status to trust
    return status, None if isinstance(answer, bytes) else answer


def expect(method: str, url: str, status: int, body: Any = None, bearer: str | None = None) -> Any:
    got, answer = call(method, url, body, bearer)
    if got != status:
        code = answer.get("error", {}).get("code") if isinstance(answer, dict) else None
        raise CheckFailed(f"{method} {urllib.parse.urlsplit(url).path}: expected {status}, got {got} ({code})")
    return answer


def error_code(answer: Any) -> str | None:
    return answer.get("error", {}).get("code") if isinstance(answer, dict) else None


def claims(access_token: str) -> dict[str, Any]:
    payload = access_token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


def mailed_code(peer_http: str, address: str) -> str:
    """The six-digit code of the first mail to `address`, read from the SMTP peer (waiting up to 20 s)."""
    query = urllib.parse.urlencode({"to": address, "wait": "20"})
    status, messages = call("GET", f"{peer_http}/messages?{query}")
    if status != 200 or not messages:
        raise CheckFailed(f"no mail to the new address reached the SMTP peer ({status})")
    message = email.message_from_string(messages[0]["raw"], policy=email.policy.default)
    part = message.get_body(preferencelist=("plain",))
    text = part.get_content() if part is not None else ""
    for line in text.splitlines():
        if re.fullmatch(r"\d{6}", line.strip()):
            return line.strip()
    raise CheckFailed("the verification mail has no six-digit code on a line of its own")


def current_step() -> int:
    return int(time.time()) // PERIOD


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    base = argv[1].rstrip("/")
    peer = json.loads(os.environ.get("LATCHKEY_TEST_SMTP_PEER") or "{}").get("http")
    if not peer:
        print("mfa_interop.py: LATCHKEY_TEST_SMTP_PEER (the SMTP peer's ready JSON) is not set", file=sys.stderr)
        return 2
    print(f"interop: second factors of {base} with pyotp")

    # 1. A verified address and two sessions.
    address = f"mfa-{uuid.uuid4().hex[:12]}@example.test"
    expect("POST", f"{base}/api/v1/auth/register", 201, {"email": address, "password": PASSWORD})
    expect("POST", f"{base}/api/v1/auth/verify-email", 200, {"email": address, "code": mailed_code(peer, address)})
    session_a = expect("POST", f"{base}/api/v1/auth/login", 200, {"email": address, "password": PASSWORD})
    session_b = expect("POST", f"{base}/api/v1/auth/login", 200, {"email": address, "password": PASSWORD})
    first = claims(session_a["access_token"])
    check(first.get("aal") == "aal1" and first.get("amr") == ["pwd"], "a password session is aal1 with amr [\"pwd\"]")

    # Line up with a step that has at least 10 s left: confirm, verify and step-up then use steps s-1, s, s+1.
    if PERIOD - int(time.time()) % PERIOD < 10:
        time.sleep(PERIOD - time.time() % PERIOD + 0.5)
    step = current_step()

    # 2. Enrolment.
    enrolment = expect("POST", f"{base}/api/v1/mfa/totp", 201, {}, bearer=session_a["access_token"])
    check(set(enrolment) == {"factor_id", "secret", "otpauth_uri"}, "enrolment answers factor_id, secret and otpauth_uri")
    totp = pyotp.parse_uri(enrolment["otpauth_uri"])
    check(isinstance(totp, pyotp.TOTP) and totp.digits == 6 and totp.interval == PERIOD, "pyotp reads the otpauth URI as a 6-digit, 30 s TOTP")
    secret = enrolment["secret"]
    key = base64.b32decode(secret + "=" * (-len(secret) % 8))
    check(totp.secret == secret and len(key) >= 20, "the URI carries the secret, base32 of a key of at least 160 bits")
    check(totp.issuer == "Latchkey" and totp.name == address, "the URI names the issuer and the address")

    def code(offset: int) -> str:
        return totp.at((step + offset) * PERIOD)

    # 3. Confirm with the code of the step before (one step of skew).
    confirmed = expect("POST", f"{base}/api/v1/mfa/totp/{enrolment['factor_id']}/confirm", 200, {"code": code(-1)},
                       bearer=session_a["access_token"])
    recovery = confirmed.get("recovery_codes", [])
    check(len(recovery) == 10 and len(set(recovery)) == 10 and all(RECOVERY_CODE.match(c) for c in recovery),
          "confirm answers ten distinct recovery codes XXXXX-XXXXX")
    check("access_token" not in confirmed, "confirm answers no tokens")

    def challenge() -> str:
        status, held = call("POST", f"{base}/api/v1/auth/login", {"email": address, "password": PASSWORD})
        if status != 403 or error_code(held) != "mfa_required":
            raise CheckFailed(f"a password login answered {status} ({error_code(held)}), not 403 mfa_required")
        return held["mfa_token"]

    # 4. The password alone no longer signs in.
    status, held = call("POST", f"{base}/api/v1/auth/login", {"email": address, "password": PASSWORD})
    check(status == 403 and error_code(held) == "mfa_required", "a password login is 403 mfa_required")
    check(isinstance(held, dict) and set(held) == {"error", "mfa_token", "factors"}, "its body is the envelope, mfa_token and factors")
    check(held.get("factors") == [{"id": enrolment["factor_id"], "type": "totp"}], "it names the factor")

    # 5. The code of this step finishes the sign-in at aal2.
    signed_in = expect("POST", f"{base}/api/v1/mfa/verify", 200, {"mfa_token": held["mfa_token"], "code": code(0)})
    second = claims(signed_in["access_token"])
    check(second.get("aal") == "aal2", "the verified session's access token says aal2")
    check(second.get("amr") == ["pwd", "otp"], "its amr is [\"pwd\", \"otp\"]")

    # 6. The same code again, on a new mfa_token.
    status, replay = call("POST", f"{base}/api/v1/mfa/verify", {"mfa_token": challenge(), "code": code(0)})
    check(status == 400 and error_code(replay) == "invalid_code", "the same code again is 400 invalid_code")

    # 7. A recovery code, once.
    recovered = expect("POST", f"{base}/api/v1/mfa/verify", 200, {"mfa_token": challenge(), "recovery_code": recovery[0]})
    third = claims(recovered["access_token"])
    check(third.get("aal") == "aal2" and third.get("amr") == ["pwd", "recovery"], "a recovery code signs in: aal2, amr [\"pwd\", \"recovery\"]")
    status, again = call("POST", f"{base}/api/v1/mfa/verify", {"mfa_token": challenge(), "recovery_code": recovery[0]})
    check(status == 400 and error_code(again) == "invalid_code", "the same recovery code again is 400 invalid_code")

    # 8. A sensitive action at aal1, then after a step-up.
    status, refused = call("POST", f"{base}/api/v1/mfa/recovery-codes", {}, bearer=session_b["access_token"])
    check(status == 403 and error_code(refused) == "aal2_required", "new recovery codes at aal1 are 403 aal2_required")
    stepped = expect("POST", f"{base}/api/v1/mfa/verify", 200, {"code": code(1)}, bearer=session_b["access_token"])
    fourth = claims(stepped["access_token"])
    check(stepped.get("session_id") == session_b["session_id"] and fourth.get("aal") == "aal2",
          "a step-up answers a new pair of the same session at aal2")
    status, fresh = call("POST", f"{base}/api/v1/mfa/recovery-codes", {}, bearer=stepped["access_token"])
    check(status == 200 and len((fresh or {}).get("recovery_codes", [])) == 10, "after the step-up new recovery codes are given")
    unused = (fresh or {}).get("recovery_codes", recovery[1:])[0]

    # 9. Five wrong codes spend an mfa_token.
    near = {totp.at((current_step() + offset) * PERIOD) for offset in range(-3, 4)} | {code(o) for o in range(-3, 4)}
    wrong = next(f"{n:06d}" for n in range(1_000_000) if f"{n:06d}" not in near)
    mfa_token = challenge()
    answers = [call("POST", f"{base}/api/v1/mfa/verify", {"mfa_token": mfa_token, "code": wrong}) for _ in range(5)]
    check(all(s == 400 and error_code(a) == "invalid_code" for s, a in answers), "five wrong codes are each 400 invalid_code")
    status, spent = call("POST", f"{base}/api/v1/mfa/verify", {"mfa_token": mfa_token, "recovery_code": unused})
    check(status == 401 and error_code(spent) == "invalid_mfa_token", "then the mfa_token is spent: 401 invalid_mfa_token")
    return 0


if __name__ == "__main__":
    try:
        code = main(sys.argv)
    except CheckFailed as error:
        shared_check(str(error), False)
        code = 1
    if not all(RESULTS):
        print(f"mfa interop: {RESULTS.count(False)} check(s) failed")
        code = 1
    elif code == 0:
        print("mfa interop: every check passed")
    sys.exit(code)
