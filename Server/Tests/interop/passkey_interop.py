#!/usr/bin/env python3
"""Interop test: passkeys (issue 33) against a live server, each refusal for its stated reason, with PyPI's webauthn
(py_webauthn) as an independent relying party and a software authenticator written here (cryptography for the keys,
cbor2 for attestation objects and COSE keys).

Usage: passkey_interop.py BASE_URL --origin ORIGIN [--rp-id localhost] [--server-log PATH] [--seed 33]

The live server must have passkeys on with `passkeys.rp-id` = --rp-id, ORIGIN among `passkeys.origins`,
`passkeys.user-verification` required (the default) and `limits.passkeys` off (the fuzzed table asks for hundreds
of challenges from one address); scripts/test sets it up so.

How a refusal is shown to be for its stated reason: every credential is made by one builder here from the server's
own options; py_webauthn (verify_registration_response / verify_authentication_response, for the same challenge,
origin and rp ID) accepts the builder's GOOD credential, and refuses the defective one wherever it checks that
thing; and the server accepts the GOOD twin of each refusal (the same builder, the same user, without the defect) in
the same run. So a server that did not check a rule would accept the defective credential and fail its check.

What it does, as an app's passkey flow would (Bearer: a device user's session from POST /api/v1/auth/register-device):
  1. options: POST /api/v1/passkeys/register/options (Bearer) and /authenticate/options (no auth) parse with
     py_webauthn's parse_registration_options_json / parse_authentication_options_json: rp ID, user.id = the user
     UUID's 16 bytes, a 32-byte challenge, ES256/EdDSA/RS256, residentKey and userVerification required,
     attestation none, empty allowCredentials; a registered passkey is then in excludeCredentials;
  2. registration: ES256 (attestation none), Ed25519 and RS256 (packed self-attestation) are 201; the same credential
     ID again is 409 passkey_exists; refused with 400 invalid_passkey, each beside its accepted twin: wrong origin
     (another site; the allowed origin with another port), crossOrigin true, type webauthn.get, a challenge the
     server did not issue, wrong rp ID (rpIdHash), UV missing, UP missing, a reused challenge, an authentication
     challenge used to register, another session's challenge, rawId not the attested credential ID, a tampered
     packed attestation signature;
  3. sign-in: POST /api/v1/passkeys/authenticate with a device_id: the same user_id, amr ["hwk", "user"], the device
     in GET /api/v1/users/me; refused with 400 invalid_passkey, each beside its accepted twin: wrong origin, wrong rp
     ID, UV missing, a flipped signature bit, clientDataJSON changed after signing, the counter going backwards
     (equal, lower, 0 once above 0), a registration challenge used to authenticate, a reused challenge, type
     webauthn.create, another user's userHandle; an unknown credential ID is 401 unknown_credential;
  4. malformed CBOR, a table of at least 200 inputs from a seeded RNG, each on a fresh challenge: mutations of a good
     packed attestation object (its signature covers authData and clientDataJSON, so a change that keeps the CBOR
     well-formed still cannot verify) and of a good assertion's authenticator data: truncations, bit flips, inserted
     and dropped bytes, indefinite lengths, huge declared lengths, duplicate map keys, deep nesting, trailing and
     leftover bytes, extensions that are not a map, COSE keys the contract refuses, attestation formats other than
     none and packed, random bytes. Each is 400 with the error envelope {"error": {"code", "message"}}; none a 5xx;
     the unmutated inputs of the table are accepted;
  5. with --server-log: nothing of the credentials (clientDataJSON, attestation object, authenticator data,
     signature) nor the session's tokens is in the server's log.

Not here: an expired challenge (the run does not sleep to wait for time to pass, and the live server's challenge
lifetime stays long enough for the browser suite): the Swift tests cover expiry with an injected clock
(PasskeyRegistrationRuleTests.aRegistrationChallengeExpires, PasskeySignInRuleTests.aSignInChallengeExpires: accepted
a second before passkeys.challenge-lifetime, refused a second after). Nor 404 passkeys_disabled (the live server has
passkeys on): the Swift tests cover it (PasskeySettingsTests).

Needs the standard library, webauthn, cbor2 and cryptography (installed by scripts/test into a throwaway venv).
Prints one PASS/FAIL line per check (never a token or a key) and exits 1 when any check failed.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import os
import random
import sys
import time
import urllib.error
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Callable

import cbor2
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, padding, rsa
from webauthn import verify_authentication_response, verify_registration_response
from webauthn.helpers import parse_authentication_options_json, parse_registration_options_json
from webauthn.helpers.exceptions import InvalidAuthenticationResponse, InvalidRegistrationResponse

from interop_checks import RESULTS
from interop_checks import bearer as bearer_header
from interop_checks import call as shared_call
from interop_checks import check

TIMEOUT = 20  # seconds per HTTP request
FUZZ_WORKERS = 4  # the fuzzed table's requests in parallel (each case on its own challenge)

UP, UV, AT, ED = 0x01, 0x04, 0x40, 0x80  # authenticator data flags
ES256, EDDSA, RS256 = -7, -8, -257


class CheckFailed(Exception):
    """A check the following steps depend on failed: the run stops."""


def require(name: str, ok: bool, detail: str = "") -> None:
    if not check(name, ok, detail):
        raise CheckFailed(name)


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def sha256(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()


# --- the server ----------------------------------------------------------------------------------------------------


class Server:
    def __init__(self, base: str):
        self.base = base.rstrip("/")
        self.secrets: list[str] = []  # every token and credential part sent or received, for the log check

    def call(self, method: str, path: str, body: Any = None, token: str | None = None) -> tuple[int, Any]:
        """(status, the parsed JSON or the raw bytes). A JSON content type whose body does not parse is (-1, None):
        no answer to trust, counted with the 5xx."""
        headers = {"Accept": "application/json", **(bearer_header(token) if token else {})}
        try:
            return shared_call(method, self.base + path, headers=headers, json_body=body, timeout=TIMEOUT)
        except (urllib.error.URLError, OSError) as error:
            raise CheckFailed(f"{method} {path}: cannot connect: {error}") from error
        except ValueError:
            return -1, None

    def device(self) -> dict[str, Any]:
        """A fresh device user's token pair."""
        status, pair = self.call("POST", "/api/v1/auth/register-device", {"device_id": str(uuid.uuid4())})
        require("register-device: 201 with a token pair", status == 201 and isinstance(pair, dict)
                and "access_token" in pair, f"status {status}")
        self.secrets += [pair["access_token"], pair["refresh_token"]]
        return pair

    def registration_options(self, token: str) -> tuple[str, dict[str, Any]]:
        status, answer = self.call("POST", "/api/v1/passkeys/register/options", {}, token)
        if status != 200 or not isinstance(answer, dict) or "options" not in answer:
            raise CheckFailed(f"register/options: expected 200 with options, got {status} ({error_code(answer)})")
        return answer["challenge_id"], answer["options"]

    def authentication_options(self) -> tuple[str, dict[str, Any]]:
        status, answer = self.call("POST", "/api/v1/passkeys/authenticate/options", {})
        if status != 200 or not isinstance(answer, dict) or "options" not in answer:
            raise CheckFailed(f"authenticate/options: expected 200 with options, got {status} ({error_code(answer)})")
        return answer["challenge_id"], answer["options"]


def error_code(answer: Any) -> str | None:
    error = answer.get("error") if isinstance(answer, dict) else None
    return error.get("code") if isinstance(error, dict) else None


def is_envelope(answer: Any) -> bool:
    error = answer.get("error") if isinstance(answer, dict) else None
    return isinstance(error, dict) and isinstance(error.get("code"), str) and isinstance(error.get("message"), str) \
        and bool(error["message"])


def claims(token: str) -> dict[str, Any]:
    payload = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


# --- the software authenticator --------------------------------------------------------------------------------------


class Credential:
    """One passkey: a key pair (ES256 P-256, Ed25519 or RS256), its credential ID and its user handle."""

    def __init__(self, alg: int = ES256, user_handle: bytes = b""):
        self.alg = alg
        self.credential_id = os.urandom(32)
        self.user_handle = user_handle
        if alg == ES256:
            self.key = ec.generate_private_key(ec.SECP256R1())
        elif alg == EDDSA:
            self.key = ed25519.Ed25519PrivateKey.generate()
        elif alg == RS256:
            self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        else:
            raise ValueError(alg)

    def cose_fields(self) -> dict[int, Any]:
        public = self.key.public_key()
        if self.alg == ES256:
            numbers = public.public_numbers()
            return {1: 2, 3: ES256, -1: 1, -2: numbers.x.to_bytes(32, "big"), -3: numbers.y.to_bytes(32, "big")}
        if self.alg == EDDSA:
            raw = public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
            return {1: 1, 3: EDDSA, -1: 6, -2: raw}
        numbers = public.public_numbers()
        return {1: 3, 3: RS256, -1: numbers.n.to_bytes(256, "big"), -2: numbers.e.to_bytes(3, "big")}

    def cose_key(self) -> bytes:
        return cbor2.dumps(self.cose_fields())

    def sign(self, data: bytes) -> bytes:
        if self.alg == ES256:
            return self.key.sign(data, ec.ECDSA(hashes.SHA256()))
        if self.alg == EDDSA:
            return self.key.sign(data)
        return self.key.sign(data, padding.PKCS1v15(), hashes.SHA256())


def client_data(kind: str, challenge: str, origin: str, cross_origin: bool | None = False, **extra: Any) -> bytes:
    fields: dict[str, Any] = {"type": kind, "challenge": challenge, "origin": origin}
    if cross_origin is not None:
        fields["crossOrigin"] = cross_origin
    fields.update(extra)
    return json.dumps(fields, separators=(",", ":")).encode()


def authenticator_data(rp_id: str, flags: int, sign_count: int, attested: bytes = b"", extensions: bytes = b"",
                       rp_id_hash: bytes | None = None) -> bytes:
    return (rp_id_hash or sha256(rp_id.encode())) + bytes([flags]) + sign_count.to_bytes(4, "big") + attested + extensions


def attested_data(credential: Credential, cose_key: bytes | None = None, credential_id: bytes | None = None) -> bytes:
    cid = credential.credential_id if credential_id is None else credential_id
    return bytes(16) + len(cid).to_bytes(2, "big") + cid + (credential.cose_key() if cose_key is None else cose_key)


def attestation_object(fmt: str, auth_data: bytes, att_stmt: dict[str, Any] | None = None) -> bytes:
    return cbor2.dumps({"fmt": fmt, "attStmt": att_stmt or {}, "authData": auth_data})


def packed_self(credential: Credential, auth_data: bytes, client_data_json: bytes) -> bytes:
    """A packed self-attestation: the credential's own key signs authData ‖ SHA-256(clientDataJSON)."""
    sig = credential.sign(auth_data + sha256(client_data_json))
    return attestation_object("packed", auth_data, {"alg": credential.alg, "sig": sig})


def registration_json(credential: Credential, client_data_json: bytes, att_obj: bytes, raw_id: bytes | None = None) -> dict:
    raw = b64url(credential.credential_id if raw_id is None else raw_id)
    return {"id": raw, "rawId": raw, "type": "public-key", "authenticatorAttachment": "platform",
            "clientExtensionResults": {},
            "response": {"clientDataJSON": b64url(client_data_json), "attestationObject": b64url(att_obj),
                         "transports": ["internal"]}}


def assertion_json(credential: Credential, client_data_json: bytes, auth_data: bytes, signature: bytes,
                   user_handle: bytes | None) -> dict:
    raw = b64url(credential.credential_id)
    response = {"clientDataJSON": b64url(client_data_json), "authenticatorData": b64url(auth_data),
                "signature": b64url(signature)}
    if user_handle is not None:
        response["userHandle"] = b64url(user_handle)
    return {"id": raw, "rawId": raw, "type": "public-key", "authenticatorAttachment": "platform",
            "clientExtensionResults": {}, "response": response}


# --- the ceremonies --------------------------------------------------------------------------------------------------


@dataclass
class Defect:
    """What a registration or an assertion gets wrong (all defaults: a good one)."""
    origin: str | None = None
    kind: str | None = None
    cross_origin: bool | None = False
    challenge: str | None = None  # the challenge written into clientDataJSON (default: the options')
    rp_id: str | None = None  # the rp ID whose hash is in authData
    flags: int | None = None
    sign_count: int | None = None
    raw_id: bytes | None = None
    tamper: str | None = None  # "attestation-signature", "signature", "client-data"
    user_handle: bytes | None = None
    extra: dict[str, Any] = field(default_factory=dict)


class Peer:
    def __init__(self, server: Server, origin: str, rp_id: str):
        self.server, self.origin, self.rp_id = server, origin, rp_id

    # Registration.
    def registration(self, credential: Credential, options: dict[str, Any], defect: Defect | None = None,
                     fmt: str = "none", sign_count: int = 0) -> dict:
        d = defect or Defect()
        challenge = d.challenge or options["challenge"]
        cdj = client_data(d.kind or "webauthn.create", challenge, d.origin or self.origin, d.cross_origin, **d.extra)
        flags = (UP | UV | AT) if d.flags is None else d.flags
        auth = authenticator_data(d.rp_id or self.rp_id, flags, sign_count, attested_data(credential))
        att = packed_self(credential, auth, cdj) if fmt == "packed" else attestation_object("none", auth)
        if d.tamper == "attestation-signature":
            decoded = cbor2.loads(att)
            sig = bytearray(decoded["attStmt"]["sig"])
            sig[len(sig) // 2] ^= 0x01
            att = attestation_object("packed", auth, {"alg": credential.alg, "sig": bytes(sig)})
        self.server.secrets += [b64url(cdj), b64url(att)]
        return registration_json(credential, cdj, att, d.raw_id)

    def peer_verifies_registration(self, credential_json: dict, options: dict[str, Any]) -> str | None:
        """None when py_webauthn accepts the credential for these options, else its reason."""
        try:
            verify_registration_response(credential=credential_json, expected_challenge=unb64url(options["challenge"]),
                                         expected_rp_id=self.rp_id, expected_origin=self.origin,
                                         require_user_verification=True,
                                         supported_pub_key_algs=[ES256, EDDSA, RS256])
            return None
        except InvalidRegistrationResponse as error:
            return str(error) or type(error).__name__

    def register(self, token: str, credential: Credential, defect: Defect | None = None, fmt: str = "none",
                 challenge_id: str | None = None, options: dict | None = None) -> tuple[int, Any, dict]:
        if challenge_id is None:
            challenge_id, options = self.server.registration_options(token)
        body = self.registration(credential, options, defect, fmt)
        status, answer = self.server.call("POST", "/api/v1/passkeys/register",
                                          {"challenge_id": challenge_id, "credential": body}, token)
        return status, answer, body

    # Authentication.
    def assertion(self, credential: Credential, options: dict[str, Any], sign_count: int,
                  defect: Defect | None = None) -> dict:
        d = defect or Defect()
        challenge = d.challenge or options["challenge"]
        cdj = client_data(d.kind or "webauthn.get", challenge, d.origin or self.origin, d.cross_origin, **d.extra)
        flags = (UP | UV) if d.flags is None else d.flags
        auth = authenticator_data(d.rp_id or self.rp_id, flags, sign_count)
        signature = credential.sign(auth + sha256(cdj))
        if d.tamper == "signature":
            flipped = bytearray(signature)
            flipped[len(flipped) // 2] ^= 0x01
            signature = bytes(flipped)
        elif d.tamper == "client-data":  # a member added after the authenticator signed
            cdj = cdj[:-1] + b',"note":"changed after signing"}'
        self.server.secrets += [b64url(cdj), b64url(auth), b64url(signature)]
        handle = d.user_handle if d.user_handle is not None else credential.user_handle
        return assertion_json(credential, cdj, auth, signature, handle)

    def peer_verifies_assertion(self, credential_json: dict, options: dict[str, Any], credential: Credential,
                                stored_count: int) -> str | None:
        try:
            verify_authentication_response(credential=credential_json, expected_challenge=unb64url(options["challenge"]),
                                           expected_rp_id=self.rp_id, expected_origin=self.origin,
                                           credential_public_key=credential.cose_key(),
                                           credential_current_sign_count=stored_count, require_user_verification=True)
            return None
        except InvalidAuthenticationResponse as error:
            return str(error) or type(error).__name__

    def authenticate(self, credential: Credential, sign_count: int, defect: Defect | None = None,
                     device_id: str | None = None, challenge_id: str | None = None,
                     options: dict | None = None) -> tuple[int, Any, dict]:
        if challenge_id is None:
            challenge_id, options = self.server.authentication_options()
        body = self.assertion(credential, options, sign_count, defect)
        request: dict[str, Any] = {"challenge_id": challenge_id, "credential": body}
        if device_id:
            request["device_id"] = device_id
        status, answer = self.server.call("POST", "/api/v1/passkeys/authenticate", request)
        if status == 200 and isinstance(answer, dict):
            self.server.secrets += [answer.get("access_token", ""), answer.get("refresh_token", "")]
        return status, answer, body


def refused(name: str, status: int, answer: Any, expected: tuple[int, str] = (400, "invalid_passkey")) -> bool:
    return check(f"{name}: {expected[0]} {expected[1]} with the envelope",
                 status == expected[0] and error_code(answer) == expected[1] and is_envelope(answer),
                 f"got {status} {error_code(answer)}")


# --- 1 and 2: options and registration ---------------------------------------------------------------------------


def check_options(server: Server, peer: Peer, pair: dict) -> None:
    challenge_id, options = server.registration_options(pair["access_token"])
    parsed = parse_registration_options_json(options)
    check("register/options: py_webauthn parses the options", parsed is not None)
    check("register/options: a challenge_id", isinstance(challenge_id, str) and len(challenge_id) > 0)
    check("register/options: rp.id is the rp ID", parsed.rp.id == peer.rp_id, repr(parsed.rp.id))
    check("register/options: user.id is the user UUID's 16 bytes", parsed.user.id == uuid.UUID(pair["user_id"]).bytes)
    check("register/options: user.name and displayName (no email: the user ID)",
          parsed.user.name == pair["user_id"] and parsed.user.display_name == pair["user_id"],
          f"{parsed.user.name!r} / {parsed.user.display_name!r}")
    check("register/options: a 32-byte challenge", len(parsed.challenge) == 32, f"{len(parsed.challenge)} bytes")
    algs = {int(p.alg) for p in parsed.pub_key_cred_params}
    check("register/options: pubKeyCredParams ES256, EdDSA and RS256", algs >= {ES256, EDDSA, RS256}, str(sorted(algs)))
    selection = parsed.authenticator_selection
    check("register/options: residentKey required, userVerification required",
          selection is not None and selection.resident_key == "required" and selection.user_verification == "required",
          str(options.get("authenticatorSelection")))
    check("register/options: attestation none", parsed.attestation == "none", repr(options.get("attestation")))
    check("register/options: no excludeCredentials before the first passkey", not parsed.exclude_credentials)
    check("register/options: a timeout in milliseconds", isinstance(options.get("timeout"), int) and options["timeout"] >= 1000,
          repr(options.get("timeout")))
    _, other = server.registration_options(pair["access_token"])
    check("register/options: each options call a new challenge", other["challenge"] != options["challenge"])

    challenge_id, options = server.authentication_options()
    parsed = parse_authentication_options_json(options)
    check("authenticate/options: py_webauthn parses the options (no Bearer needed)", parsed is not None)
    check("authenticate/options: rpId is the rp ID", parsed.rp_id == peer.rp_id, repr(parsed.rp_id))
    check("authenticate/options: empty allowCredentials (discoverable credentials)", not parsed.allow_credentials)
    check("authenticate/options: a 32-byte challenge", len(parsed.challenge) == 32)
    check("authenticate/options: userVerification required", parsed.user_verification == "required",
          repr(options.get("userVerification")))


def check_registration(server: Server, peer: Peer, pair: dict, handle: bytes) -> Credential:
    token = pair["access_token"]
    # The first passkey, checked by py_webauthn before the server sees it.
    challenge_id, options = server.registration_options(token)
    passkey = Credential(ES256, handle)
    body = peer.registration(passkey, options)
    reason = peer.peer_verifies_registration(body, options)
    require("py_webauthn accepts the software authenticator's registration (ES256, attestation none)", reason is None,
            reason or "")
    status, answer = server.call("POST", "/api/v1/passkeys/register",
                                 {"challenge_id": challenge_id, "credential": body, "name": "Peer ES256"}, token)
    require("register: ES256, attestation none is 201", status == 201, f"got {status} {error_code(answer)}")
    check("register: the answer has passkey_id, name, created_at and backed_up",
          isinstance(answer, dict) and {"passkey_id", "name", "created_at", "backed_up"} <= set(answer)
          and answer.get("name") == "Peer ES256" and answer.get("backed_up") is False, str(sorted(answer or {})))

    _, options = server.registration_options(token)
    excluded = [c.get("id") for c in options.get("excludeCredentials", [])]
    check("register/options: the passkey is in excludeCredentials", b64url(passkey.credential_id) in excluded)

    for alg, label in ((EDDSA, "Ed25519"), (RS256, "RS256")):
        credential = Credential(alg, handle)
        challenge_id, options = server.registration_options(token)
        body = peer.registration(credential, options, fmt="packed")
        reason = peer.peer_verifies_registration(body, options)
        check(f"py_webauthn accepts the {label} registration (packed self-attestation)", reason is None, reason or "")
        status, answer = server.call("POST", "/api/v1/passkeys/register", {"challenge_id": challenge_id, "credential": body}, token)
        check(f"register: {label}, packed self-attestation is 201", status == 201, f"got {status} {error_code(answer)}")

    status, answer, _ = peer.register(token, passkey)
    refused("register: the same credential ID again", status, answer, (409, "passkey_exists"))

    # Each refusal beside its twin: the same builder without the defect.
    other_port = peer.origin.rsplit(":", 1)[0] + ":1" if peer.origin.count(":") == 2 else peer.origin + ":1"
    cases = [
        ("wrong origin (another site)", Defect(origin="https://evil.example"), True),
        ("wrong origin (the allowed origin's host on another port)", Defect(origin=other_port), True),
        ("crossOrigin true", Defect(cross_origin=True), False),
        ("type webauthn.get in a registration", Defect(kind="webauthn.get"), True),
        ("a challenge the server did not issue", Defect(challenge=b64url(os.urandom(32))), True),
        ("wrong rp ID (rpIdHash of example.com)", Defect(rp_id="example.com"), True),
        ("UV missing (user-verification required)", Defect(flags=UP | AT), True),
        ("UP missing", Defect(flags=UV | AT), True),
        ("rawId not the attested credential ID", Defect(raw_id=os.urandom(32)), False),
        ("a tampered packed attestation signature", Defect(tamper="attestation-signature"), True),
    ]
    for name, defect, peer_checks in cases:
        fmt = "packed" if defect.tamper else "none"
        challenge_id, options = server.registration_options(token)
        bad = peer.registration(Credential(ES256, handle), options, defect, fmt)
        if peer_checks:
            reason = peer.peer_verifies_registration(bad, options)
            check(f"register, {name}: py_webauthn refuses it too", reason is not None, reason or "accepted")
        status, answer = server.call("POST", "/api/v1/passkeys/register", {"challenge_id": challenge_id, "credential": bad}, token)
        refused(f"register, {name}", status, answer)
        status, answer, _ = peer.register(token, Credential(ES256, handle), fmt=fmt)
        check(f"register, {name}: its twin without the defect is 201", status == 201, f"got {status} {error_code(answer)}")

    # A reused challenge: accepted once, then refused for a new credential.
    challenge_id, options = server.registration_options(token)
    status, answer, _ = peer.register(token, Credential(ES256, handle), challenge_id=challenge_id, options=options)
    check("register, reused challenge: the first use is 201", status == 201, f"got {status} {error_code(answer)}")
    status, answer, _ = peer.register(token, Credential(ES256, handle), challenge_id=challenge_id, options=options)
    refused("register, the same challenge_id again", status, answer)

    # An authentication challenge used to register.
    challenge_id, options = server.authentication_options()
    status, answer, _ = peer.register(token, Credential(ES256, handle), challenge_id=challenge_id, options=options)
    refused("register with an authentication challenge", status, answer)

    # Another session's challenge: the options of session B finished with session A's Bearer.
    other = server.device()
    challenge_id, options = server.registration_options(other["access_token"])
    status, answer, _ = peer.register(token, Credential(ES256, handle), challenge_id=challenge_id, options=options)
    refused("register with another session's challenge", status, answer)
    challenge_id, options = server.registration_options(token)
    status, answer, _ = peer.register(token, Credential(ES256, handle), challenge_id=challenge_id, options=options)
    check("register with the session's own challenge (the twin) is 201", status == 201, f"got {status} {error_code(answer)}")
    return passkey


# --- 3: sign-in ------------------------------------------------------------------------------------------------------


def check_sign_in(server: Server, peer: Peer, pair: dict, passkey: Credential) -> None:
    # The first sign-in, on a "new phone" (a new device_id), checked by py_webauthn first.
    device = str(uuid.uuid4())
    challenge_id, options = server.authentication_options()
    count = 5
    body = peer.assertion(passkey, options, count)
    reason = peer.peer_verifies_assertion(body, options, passkey, 0)
    require("py_webauthn accepts the software authenticator's assertion", reason is None, reason or "")
    status, answer = server.call("POST", "/api/v1/passkeys/authenticate",
                                 {"challenge_id": challenge_id, "credential": body, "device_id": device})
    require("authenticate: 200 with a token pair", status == 200 and isinstance(answer, dict) and "access_token" in answer,
            f"got {status} {error_code(answer)}")
    server.secrets += [answer["access_token"], answer["refresh_token"]]
    check("authenticate: the same user_id", answer.get("user_id") == pair["user_id"])
    token_claims = claims(answer["access_token"])
    check("authenticate: the access token's amr is [\"hwk\", \"user\"]", token_claims.get("amr") == ["hwk", "user"],
          str(token_claims.get("amr")))
    check("authenticate: the access token says aal2 (possession and UV)", token_claims.get("aal") == "aal2",
          str(token_claims.get("aal")))
    status, me = server.call("GET", "/api/v1/users/me", token=answer["access_token"])
    devices = [d.get("device_id", "").lower() for d in (me or {}).get("devices", [])] if isinstance(me, dict) else []
    check("users/me: the new device_id joined the user's devices", status == 200 and device.lower() in devices,
          f"status {status}, {len(devices)} devices")
    status, listed = server.call("GET", "/api/v1/passkeys", token=pair["access_token"])
    used = [p for p in (listed or {}).get("passkeys", []) if p.get("name") == "Peer ES256"] if isinstance(listed, dict) else []
    check("GET /api/v1/passkeys: the passkey has a last_used_at now", status == 200 and len(used) == 1
          and used[0].get("last_used_at"), f"status {status}")

    def twin(name: str) -> None:
        """The same assertion without the defect; its counter is 2 above the stored one, so a defective assertion that
        the server wrongly took (at 1 above) does not make the twin fail too."""
        nonlocal count
        status, answer, _ = peer.authenticate(passkey, count + 2)
        if check(f"authenticate, {name}: its twin without the defect is 200", status == 200, f"got {status} {error_code(answer)}"):
            count += 2

    other_user = uuid.UUID(server.device()["user_id"]).bytes
    cases = [
        ("wrong origin", Defect(origin="https://evil.example"), True),
        ("wrong rp ID (rpIdHash of example.com)", Defect(rp_id="example.com"), True),
        ("UV missing (user-verification required)", Defect(flags=UP), True),
        ("UP missing", Defect(flags=UV), True),
        ("a flipped signature bit", Defect(tamper="signature"), True),
        ("clientDataJSON changed after signing", Defect(tamper="client-data"), True),
        ("type webauthn.create in an assertion", Defect(kind="webauthn.create"), True),
        ("a challenge the server did not issue", Defect(challenge=b64url(os.urandom(32))), True),
        ("crossOrigin true", Defect(cross_origin=True), False),
        ("another user's userHandle", Defect(user_handle=other_user), False),
    ]
    for name, defect, peer_checks in cases:
        challenge_id, options = server.authentication_options()
        bad = peer.assertion(passkey, options, count + 1, defect)
        if peer_checks:
            reason = peer.peer_verifies_assertion(bad, options, passkey, count)
            check(f"authenticate, {name}: py_webauthn refuses it too", reason is not None, reason or "accepted")
        status, answer = server.call("POST", "/api/v1/passkeys/authenticate", {"challenge_id": challenge_id, "credential": bad})
        refused(f"authenticate, {name}", status, answer)
        twin(name)

    # The counter going backwards (a cloned authenticator): equal, lower, and 0 once the stored count is above 0.
    for name, backwards in (("the counter not increasing (equal)", lambda c: c), ("the counter going backwards", lambda c: c - 2),
                            ("the counter back at 0", lambda c: 0)):
        challenge_id, options = server.authentication_options()
        bad = peer.assertion(passkey, options, backwards(count))
        reason = peer.peer_verifies_assertion(bad, options, passkey, count)
        check(f"authenticate, {name}: py_webauthn refuses it too", reason is not None, reason or "accepted")
        status, answer = server.call("POST", "/api/v1/passkeys/authenticate", {"challenge_id": challenge_id, "credential": bad})
        refused(f"authenticate, {name} (stored {count})", status, answer)
        twin(name)

    # A reused challenge: accepted once, then refused even with a higher counter.
    challenge_id, options = server.authentication_options()
    status, answer, _ = peer.authenticate(passkey, count + 1, challenge_id=challenge_id, options=options)
    if check("authenticate, reused challenge: the first use is 200", status == 200, f"got {status} {error_code(answer)}"):
        count += 1
    status, answer, _ = peer.authenticate(passkey, count + 2, challenge_id=challenge_id, options=options)
    refused("authenticate, the same challenge_id again", status, answer)
    twin("a reused challenge")

    # A registration challenge (its clientDataJSON says webauthn.get, as an assertion's does) used to authenticate.
    challenge_id, options = server.registration_options(pair["access_token"])
    status, answer, _ = peer.authenticate(passkey, count + 1, challenge_id=challenge_id, options=options)
    refused("authenticate with a registration challenge", status, answer)
    twin("a registration challenge")

    status, answer, _ = peer.authenticate(Credential(ES256, passkey.user_handle), 1)
    refused("authenticate with a credential ID never registered", status, answer, (401, "unknown_credential"))


# --- 4: the fuzzed table --------------------------------------------------------------------------------------------
# CBOR written by hand where cbor2 would not (indefinite lengths, duplicate keys, huge declared lengths).


def head(major: int, n: int) -> bytes:
    if n < 24:
        return bytes([major << 5 | n])
    for info, size in ((24, 1), (25, 2), (26, 4), (27, 8)):
        if n < 1 << (8 * size):
            return bytes([major << 5 | info]) + n.to_bytes(size, "big")
    raise ValueError(n)


def E(value: Any) -> bytes:
    return cbor2.dumps(value)


def cbor_map(pairs: list[tuple[bytes, bytes]], count: int | None = None) -> bytes:
    return head(5, len(pairs) if count is None else count) + b"".join(k + v for k, v in pairs)


def indefinite_map(pairs: list[tuple[bytes, bytes]]) -> bytes:
    return b"\xbf" + b"".join(k + v for k, v in pairs) + b"\xff"


def chunked(major: int, data: bytes) -> bytes:
    """An indefinite-length byte string (major 2) or text (major 3) in two definite chunks."""
    half = len(data) // 2
    return bytes([major << 5 | 31]) + head(major, half) + data[:half] + head(major, len(data) - half) + data[half:] + b"\xff"


HUGE = b"\xff" * 8


@dataclass
class RegistrationBase:
    """A good packed self-attestation for one fresh challenge: what each registration mutation starts from."""
    credential: Credential
    client_data: bytes
    auth_data: bytes
    att: bytes
    rp_id: str

    @property
    def sig(self) -> bytes:
        return cbor2.loads(self.att)["attStmt"]["sig"]

    def signed(self, auth_data: bytes) -> bytes:
        return self.credential.sign(auth_data + sha256(self.client_data))

    def parts(self, fmt: bytes | None = None, stmt: bytes | None = None, auth: bytes | None = None) -> list[tuple[bytes, bytes]]:
        return [(E("fmt"), fmt or E("packed")), (E("attStmt"), stmt or E({"alg": ES256, "sig": self.sig})),
                (E("authData"), auth or E(self.auth_data))]

    def resigned(self, auth_data: bytes) -> bytes:
        """authData as given, signed again: only the strict parsing can refuse it."""
        return attestation_object("packed", auth_data, {"alg": ES256, "sig": self.signed(auth_data)})

    def with_cose(self, cose_key: bytes, fmt: str = "packed", flags: int = UP | UV | AT, tail: bytes = b"") -> bytes:
        auth = authenticator_data(self.rp_id, flags, 0, attested_data(self.credential, cose_key)) + tail
        return self.resigned(auth) if fmt == "packed" else attestation_object("none", auth)

    def cose_pairs(self) -> list[tuple[bytes, bytes]]:
        return [(E(k), E(v)) for k, v in self.credential.cose_fields().items()]


def nested(depth: int, opener: bytes, leaf: bytes = b"\x00") -> bytes:
    return opener * depth + leaf


def registration_table(rng: random.Random) -> list[tuple[str, Callable[[RegistrationBase], bytes]]]:
    table: list[tuple[str, Callable[[RegistrationBase], bytes]]] = []
    add = lambda name, fn: table.append((name, fn))  # noqa: E731

    for n in (0, 1, 2, 3, 4, 8):
        add(f"truncated to {n} bytes", lambda b, n=n: b.att[:n])
    for i in range(30):
        fraction = 0.05 + 0.94 * i / 29
        add(f"truncated to {fraction:.0%}", lambda b, f=fraction: b.att[:int(len(b.att) * f)])
    add("without its last byte", lambda b: b.att[:-1])
    for _ in range(64):
        where, bit = rng.random(), rng.randrange(8)

        def flip(b: RegistrationBase, where: float = where, bit: int = bit) -> bytes:
            data = bytearray(b.att)
            data[int(len(data) * where)] ^= 1 << bit
            return bytes(data)
        add(f"bit {bit} flipped at {where:.0%}", flip)
    for _ in range(8):
        where, value = rng.random(), rng.randrange(256)
        add(f"byte {value:#04x} inserted at {where:.0%}",
            lambda b, w=where, v=value: b.att[:int(len(b.att) * w)] + bytes([v]) + b.att[int(len(b.att) * w):])
    for _ in range(8):
        where = rng.random()
        add(f"a byte dropped at {where:.0%}", lambda b, w=where: b.att[:int(len(b.att) * w)] + b.att[int(len(b.att) * w) + 1:])

    # Indefinite lengths (the same values: a decoder that allowed them would accept the credential).
    add("indefinite: the top-level map", lambda b: indefinite_map(b.parts()))
    add("indefinite: attStmt", lambda b: cbor_map(b.parts(stmt=indefinite_map([(E("alg"), E(ES256)), (E("sig"), E(b.sig))]))))
    add("indefinite: the fmt text in chunks", lambda b: cbor_map(b.parts(fmt=chunked(3, b"packed"))))
    add("indefinite: authData in chunks", lambda b: cbor_map(b.parts(auth=chunked(2, b.auth_data))))
    add("indefinite: sig in chunks", lambda b: cbor_map(b.parts(stmt=cbor_map([(E("alg"), E(ES256)), (E("sig"), chunked(2, b.sig))]))))
    add("indefinite: the COSE key map (re-signed)", lambda b: b.with_cose(indefinite_map(b.cose_pairs())))
    add("indefinite: the extensions map (ED, re-signed)",
        lambda b: b.resigned(authenticator_data(b.rp_id, UP | UV | AT | ED, 0, attested_data(b.credential))
                             + indefinite_map([(E("credProtect"), E(1))])))
    add("indefinite: an x5c array", lambda b: cbor_map(b.parts(stmt=cbor_map(
        [(E("alg"), E(ES256)), (E("sig"), E(b.sig)), (E("x5c"), b"\x9f" + E(b"\x30\x00") + b"\xff")]))))

    # Huge declared lengths.
    add("huge: authData declares 2^64-1 bytes", lambda b: cbor_map(b.parts(auth=b"\x5b" + HUGE + b.auth_data)))
    add("huge: authData declares 2^32-1 bytes", lambda b: cbor_map(b.parts(auth=b"\x5a" + HUGE[:4] + b.auth_data)))
    add("huge: authData declares 65535 bytes", lambda b: cbor_map(b.parts(auth=b"\x59\xff\xff" + b.auth_data)))
    add("huge: sig declares 2^64-1 bytes", lambda b: cbor_map(b.parts(stmt=head(5, 2) + E("alg") + E(ES256) + E("sig") + b"\x5b" + HUGE + b.sig)))
    add("huge: fmt declares 2^64-1 bytes of text", lambda b: cbor_map(b.parts(fmt=b"\x7b" + HUGE + b"packed")))
    add("huge: the top-level map declares 2^64-1 pairs", lambda b: b"\xbb" + HUGE + b"".join(k + v for k, v in b.parts()))
    add("huge: attStmt declares 2^32-1 pairs", lambda b: cbor_map(b.parts(stmt=b"\xba" + HUGE[:4] + E("alg") + E(ES256))))
    add("huge: an x5c array of 2^64-1 items", lambda b: cbor_map(b.parts(stmt=cbor_map(
        [(E("alg"), E(ES256)), (E("sig"), E(b.sig)), (E("x5c"), b"\x9b" + HUGE + E(b"\x30\x00"))]))))
    add("huge: the whole input a byte string of 2^64-1", lambda b: b"\x5b" + HUGE + b.att)
    add("huge: the COSE key's x declares 2^64-1 bytes (re-signed)", lambda b: b.with_cose(
        cbor_map([(E(1), E(2)), (E(3), E(ES256)), (E(-1), E(1)), (E(-2), b"\x5b" + HUGE + bytes(32)), (E(-3), bytes(33))])))
    add("huge: credentialIdLength 65535 (re-signed)", lambda b: b.resigned(
        authenticator_data(b.rp_id, UP | UV | AT, 0) + bytes(16) + b"\xff\xff" + b.credential.credential_id + b.credential.cose_key()))

    # Duplicate map keys.
    add("duplicate: fmt twice", lambda b: cbor_map([(E("fmt"), E("packed"))] + b.parts()))
    add("duplicate: fmt none then packed", lambda b: cbor_map([(E("fmt"), E("none"))] + b.parts()))
    add("duplicate: authData twice", lambda b: cbor_map(b.parts() + [(E("authData"), E(b.auth_data))]))
    add("duplicate: attStmt alg twice", lambda b: cbor_map(b.parts(stmt=cbor_map(
        [(E("alg"), E(ES256)), (E("alg"), E(ES256)), (E("sig"), E(b.sig))]))))
    add("duplicate: attStmt sig twice", lambda b: cbor_map(b.parts(stmt=cbor_map(
        [(E("alg"), E(ES256)), (E("sig"), E(b.sig)), (E("sig"), E(b.sig))]))))
    add("duplicate: the COSE key's alg label twice (re-signed)", lambda b: b.with_cose(
        cbor_map(b.cose_pairs() + [(E(3), E(ES256))])))
    add("duplicate: the COSE key's x twice (re-signed)", lambda b: b.with_cose(
        cbor_map(b.cose_pairs() + [(E(-2), E(b.credential.cose_fields()[-2]))])))

    # Deep nesting (each where the value must be something else, so a decoder without a depth limit still refuses).
    add("deep: arrays 10000 deep instead of the map", lambda b: nested(10000, b"\x81"))
    add("deep: indefinite arrays 10000 deep", lambda b: nested(10000, b"\x9f", b"\x00" + b"\xff" * 10000))
    add("deep: maps 5000 deep instead of the map", lambda b: nested(5000, b"\xa1\x00"))
    add("deep: tags 10000 deep around 0", lambda b: nested(10000, b"\xc6"))
    add("deep: alg is arrays 10000 deep", lambda b: cbor_map(b.parts(stmt=cbor_map(
        [(E("alg"), nested(10000, b"\x81")), (E("sig"), E(b.sig))]))))
    add("deep: sig is maps 5000 deep", lambda b: cbor_map(b.parts(stmt=cbor_map(
        [(E("alg"), E(ES256)), (E("sig"), nested(5000, b"\xa1\x00"))]))))
    add("deep: authData is arrays 10000 deep", lambda b: cbor_map(b.parts(auth=nested(10000, b"\x81"))))
    add("deep: the COSE key's x is arrays 1000 deep (re-signed)", lambda b: b.with_cose(cbor_map(
        [(E(1), E(2)), (E(3), E(ES256)), (E(-1), E(1)), (E(-2), nested(1000, b"\x81")), (E(-3), bytes(33))])))
    add("deep: an extension value 10000 arrays deep (ED, re-signed)",
        lambda b: b.resigned(authenticator_data(b.rp_id, UP | UV | AT | ED, 0, attested_data(b.credential))
                             + cbor_map([(E("x"), nested(10000, b"\x81"))])))

    # Random bytes, and random bytes after a well-formed start.
    for _ in range(40):
        blob = rng.randbytes(rng.randrange(0, 400))
        add(f"{len(blob)} random bytes", lambda b, blob=blob: blob)
    for _ in range(10):
        where, tail = rng.random(), rng.randbytes(rng.randrange(1, 80))
        add(f"the first {where:.0%} then {len(tail)} random bytes", lambda b, w=where, t=tail: b.att[:int(len(b.att) * w)] + t)

    # Well-formed CBOR the contract refuses.
    add("trailing: one byte after the map", lambda b: b.att + b"\x00")
    add("trailing: a second attestation object after the first", lambda b: b.att + b.att)
    tail = rng.randbytes(64)
    add("trailing: 64 random bytes after the map", lambda b: b.att + tail)
    add("authData: one leftover byte after the COSE key (re-signed)", lambda b: b.resigned(b.auth_data + b"\x00"))
    add("authData: 16 leftover bytes after the COSE key (re-signed)", lambda b: b.resigned(b.auth_data + bytes(range(16))))
    add("authData: ED set, no extensions (re-signed)",
        lambda b: b.resigned(authenticator_data(b.rp_id, UP | UV | AT | ED, 0, attested_data(b.credential))))
    for label, value in (("an integer", 5), ("an array", [1]), ("a text", "x"), ("a byte string", b"\x01")):
        add(f"authData: ED set, extensions {label} (re-signed)", lambda b, v=value: b.resigned(
            authenticator_data(b.rp_id, UP | UV | AT | ED, 0, attested_data(b.credential)) + E(v)))
    add("authData: extensions without the ED flag (re-signed)", lambda b: b.resigned(
        authenticator_data(b.rp_id, UP | UV | AT, 0, attested_data(b.credential)) + E({"credProtect": 1})))
    add("authData: attested data without the AT flag (re-signed)", lambda b: b.resigned(
        authenticator_data(b.rp_id, UP | UV, 0, attested_data(b.credential))))
    add("authData: no attested data and no AT flag (re-signed)", lambda b: b.resigned(authenticator_data(b.rp_id, UP | UV, 0)))
    add("authData: 36 bytes (re-signed)", lambda b: b.resigned(b.auth_data[:36]))
    add("authData: empty", lambda b: cbor_map(b.parts(auth=E(b""))))
    add("authData: credentialIdLength past the end (re-signed)", lambda b: b.resigned(
        authenticator_data(b.rp_id, UP | UV | AT, 0) + bytes(16) + (len(b.credential.credential_id) + 200).to_bytes(2, "big")
        + b.credential.credential_id + b.credential.cose_key()))
    add("authData: credentialIdLength 0 (re-signed)", lambda b: b.resigned(
        authenticator_data(b.rp_id, UP | UV | AT, 0) + bytes(16) + b"\x00\x00" + b.credential.cose_key()))
    add("authData: no COSE key (re-signed)", lambda b: b.resigned(
        authenticator_data(b.rp_id, UP | UV | AT, 0) + bytes(16) + len(b.credential.credential_id).to_bytes(2, "big")
        + b.credential.credential_id))
    for fmt in ("fido-u2f", "tpm", "apple", "android-key", "android-safetynet", "NONE", "Packed", ""):
        add(f"fmt {fmt!r}", lambda b, f=fmt: cbor_map(b.parts(fmt=E(f))))
    add("packed: alg -8 for an ES256 key", lambda b: cbor_map(b.parts(stmt=E({"alg": EDDSA, "sig": b.sig}))))
    add("packed: alg -257 for an ES256 key", lambda b: cbor_map(b.parts(stmt=E({"alg": RS256, "sig": b.sig}))))
    add("packed: no sig", lambda b: cbor_map(b.parts(stmt=E({"alg": ES256}))))
    add("packed: no alg", lambda b: cbor_map(b.parts(stmt=E({"sig": b.sig}))))
    add("packed: sig a text", lambda b: cbor_map(b.parts(stmt=E({"alg": ES256, "sig": b64url(b.sig)}))))
    add("packed: alg a text", lambda b: cbor_map(b.parts(stmt=E({"alg": "ES256", "sig": b.sig}))))
    add("packed: alg a float", lambda b: cbor_map(b.parts(stmt=E({"alg": -7.0, "sig": b.sig}))))
    add("packed: an x5c that is not a certificate", lambda b: cbor_map(b.parts(stmt=E(
        {"alg": ES256, "sig": b.sig, "x5c": [b"\x30\x03\x02\x01\x00"]}))))
    add("authData a text", lambda b: cbor_map(b.parts(auth=E(b64url(b.auth_data)))))
    add("authData an integer", lambda b: cbor_map(b.parts(auth=E(7))))
    add("authData an array", lambda b: cbor_map(b.parts(auth=E([b.auth_data]))))
    add("fmt a byte string", lambda b: cbor_map(b.parts(fmt=E(b"packed"))))
    add("attStmt an array", lambda b: cbor_map(b.parts(stmt=E([ES256, b.sig]))))
    add("no authData", lambda b: cbor_map(b.parts()[:2]))
    add("no fmt", lambda b: cbor_map(b.parts()[1:]))
    add("no attStmt", lambda b: cbor_map([b.parts()[0], b.parts()[2]]))
    add("an array of the three values", lambda b: head(4, 3) + b"".join(v for _, v in b.parts()))
    add("integer keys 1, 2, 3 (CTAP's, not WebAuthn's)", lambda b: cbor_map([(E(i + 1), v) for i, (_, v) in enumerate(b.parts())]))
    add("an empty map", lambda b: b"\xa0")
    add("null", lambda b: b"\xf6")
    add("undefined", lambda b: b"\xf7")
    add("a half float as a key", lambda b: cbor_map([(b"\xf9\x3c\x00", E("packed"))] + b.parts()[1:]))
    add("a break byte alone", lambda b: b"\xff")
    add("a reserved additional-info byte (0x1c)", lambda b: b"\x1c" + b.att)

    # COSE keys the contract refuses (attestation none, so the key is the only thing wrong).
    p384 = ec.generate_private_key(ec.SECP384R1()).public_key().public_numbers()
    cose_cases = [
        ("kty 4 (symmetric)", lambda b: E({1: 4, 3: 5, -1: bytes(32)})),
        ("EC2 P-384 (alg -35)", lambda b: E({1: 2, 3: -35, -1: 2, -2: p384.x.to_bytes(48, "big"), -3: p384.y.to_bytes(48, "big")})),
        ("EC2 point not on the curve", lambda b: E({**b.credential.cose_fields(), -3: bytes([b.credential.cose_fields()[-3][0] ^ 1])
                                                  + b.credential.cose_fields()[-3][1:]})),
        ("EC2 x of 31 bytes", lambda b: E({**b.credential.cose_fields(), -2: b.credential.cose_fields()[-2][1:]})),
        ("EC2 without y", lambda b: E({k: v for k, v in b.credential.cose_fields().items() if k != -3})),
        ("EC2 with alg -8", lambda b: E({**b.credential.cose_fields(), 3: EDDSA})),
        ("EC2 with alg -65535 (RS1)", lambda b: E({**b.credential.cose_fields(), 3: -65535})),
        ("no kty", lambda b: E({k: v for k, v in b.credential.cose_fields().items() if k != 1})),
        ("kty a text", lambda b: E({**b.credential.cose_fields(), 1: "EC2"})),
        ("OKP with crv 7 (Ed448)", lambda b: E({1: 1, 3: EDDSA, -1: 7, -2: bytes(57)})),
        ("OKP Ed25519 key of 31 bytes", lambda b: E({1: 1, 3: EDDSA, -1: 6, -2: bytes(31)})),
        ("an empty map", lambda b: E({})),
        ("a byte string", lambda b: E(b"\x01\x02")),
    ]
    for label, cose in cose_cases:
        add(f"COSE key: {label} (attestation none)", lambda b, c=cose: b.with_cose(c(b), fmt="none"))
    return table


@dataclass
class AssertionBase:
    credential: Credential
    client_data: bytes
    auth_data: bytes
    signature: bytes
    rp_id: str

    def resigned(self, auth_data: bytes) -> tuple[bytes, bytes]:
        return auth_data, self.credential.sign(auth_data + sha256(self.client_data))

    def flagged(self, flags: int, tail: bytes = b"") -> tuple[bytes, bytes]:
        return self.resigned(self.auth_data[:32] + bytes([flags]) + self.auth_data[33:37] + tail)


def assertion_table(rng: random.Random) -> list[tuple[str, Callable[[AssertionBase], tuple[bytes, bytes]]]]:
    table: list[tuple[str, Callable[[AssertionBase], tuple[bytes, bytes]]]] = []
    add = lambda name, fn: table.append((name, fn))  # noqa: E731
    for n in range(37):
        add(f"authenticatorData truncated to {n} bytes", lambda b, n=n: (b.auth_data[:n], b.signature))
    for _ in range(40):
        where, bit = rng.randrange(37), rng.randrange(8)

        def flip(b: AssertionBase, where: int = where, bit: int = bit) -> tuple[bytes, bytes]:
            data = bytearray(b.auth_data)
            data[where] ^= 1 << bit
            return bytes(data), b.signature
        add(f"authenticatorData bit {bit} of byte {where} flipped", flip)
    for _ in range(4):
        where, value = rng.randrange(38), rng.randrange(256)
        add(f"authenticatorData: byte {value:#04x} inserted at {where}",
            lambda b, w=where, v=value: (b.auth_data[:w] + bytes([v]) + b.auth_data[w:], b.signature))
    for _ in range(4):
        where = rng.randrange(37)
        add(f"authenticatorData: byte {where} dropped", lambda b, w=where: (b.auth_data[:w] + b.auth_data[w + 1:], b.signature))
    add("authenticatorData: one leftover byte (re-signed)", lambda b: b.resigned(b.auth_data + b"\x00"))
    add("authenticatorData: 16 leftover bytes (re-signed)", lambda b: b.resigned(b.auth_data + bytes(range(16))))
    add("authenticatorData: a CBOR map without the ED flag (re-signed)", lambda b: b.resigned(b.auth_data + E({"x": 1})))
    add("authenticatorData: ED set, no extensions (re-signed)", lambda b: b.flagged(UP | UV | ED))
    for label, ext in (("an integer", E(5)), ("an array", E([1])), ("a text", E("x")),
                       ("an indefinite map", indefinite_map([(E("x"), E(1))])),
                       ("a map with a duplicate key", cbor_map([(E("x"), E(1)), (E("x"), E(1))])),
                       ("a map declaring 2^64-1 pairs", b"\xbb" + HUGE + E("x") + E(1)),
                       ("a truncated map", b"\xa1\x61x"),
                       ("a map then a leftover byte", E({"x": 1}) + b"\x00"),
                       ("a value 10000 arrays deep", cbor_map([(E("x"), nested(10000, b"\x81"))])),
                       ("a value in an indefinite text", cbor_map([(E("x"), chunked(3, b"value"))]))):
        add(f"authenticatorData: ED set, extensions {label} (re-signed)", lambda b, e=ext: b.flagged(UP | UV | ED, e))
    add("authenticatorData: AT set, no attested data (re-signed)", lambda b: b.flagged(UP | UV | AT))
    for _ in range(20):
        blob = rng.randbytes(rng.randrange(0, 120))
        add(f"authenticatorData: {len(blob)} random bytes", lambda b, blob=blob: (blob, b.signature))
    return table


def run_table(name: str, cases: list, attempt: Callable[[Callable], tuple[int, Any]]) -> None:
    """Each case on its own challenge, FUZZ_WORKERS at a time: 400 with the envelope for every one, no 5xx."""
    started = time.monotonic()
    with ThreadPoolExecutor(FUZZ_WORKERS) as pool:
        results = list(pool.map(lambda numbered: (f"#{numbered[0]} {numbered[1][0]}", *attempt(numbered[1][1])),
                                enumerate(cases, 1)))
    statuses: dict[str, int] = {}
    bad = []
    for label, status, answer in results:
        key = f"{status} {error_code(answer)}"
        statuses[key] = statuses.get(key, 0) + 1
        if not (status == 400 and is_envelope(answer)):
            bad.append((label, status, error_code(answer)))
    for label, status, code in bad[:25]:
        check(f"{name}: {label}", False, f"got {status} {code}, not 400 with the envelope")
    if len(bad) > 25:
        print(f"  ... and {len(bad) - 25} more")
    server_errors = sum(1 for _, status, _ in results if status >= 500 or status < 0)
    check(f"{name}: {len(results)} inputs, none a 5xx", server_errors == 0, f"{server_errors} 5xx or no answer")
    check(f"{name}: each 400 with the error envelope", not bad,
          f"{len(bad)} not; answers: {dict(sorted(statuses.items()))}; {time.monotonic() - started:.1f}s")


def check_fuzz(server: Server, peer: Peer, pair: dict, seed: int) -> None:
    rng = random.Random(seed)
    token, handle = pair["access_token"], uuid.UUID(pair["user_id"]).bytes

    def registration_base() -> tuple[str, RegistrationBase]:
        challenge_id, options = server.registration_options(token)
        credential = Credential(ES256, handle)
        cdj = client_data("webauthn.create", options["challenge"], peer.origin)
        auth = authenticator_data(peer.rp_id, UP | UV | AT, 0, attested_data(credential))
        return challenge_id, RegistrationBase(credential, cdj, auth, packed_self(credential, auth, cdj), peer.rp_id)

    def register(mutate: Callable[[RegistrationBase], bytes]) -> tuple[int, Any]:
        challenge_id, base = registration_base()
        body = registration_json(base.credential, base.client_data, mutate(base))
        return server.call("POST", "/api/v1/passkeys/register", {"challenge_id": challenge_id, "credential": body}, token)

    # The table's good input, unmutated, is accepted (and py_webauthn accepts it too).
    challenge_id, base = registration_base()
    body = registration_json(base.credential, base.client_data, base.att)
    reason = peer.peer_verifies_registration(body, {"challenge": json.loads(base.client_data)["challenge"]})
    check("fuzzed registrations: py_webauthn accepts the unmutated packed attestation", reason is None, reason or "")
    status, answer = server.call("POST", "/api/v1/passkeys/register", {"challenge_id": challenge_id, "credential": body}, token)
    check("fuzzed registrations: the unmutated packed attestation is 201", status == 201, f"got {status} {error_code(answer)}")
    run_table("fuzzed registrations", registration_table(rng), register)

    # Assertions: a passkey of their own; every case's counter above any before it.
    fuzz_key = Credential(ES256, handle)
    status, answer, _ = peer.register(token, fuzz_key, fmt="packed")
    require("fuzzed assertions: their passkey is registered", status == 201, f"got {status} {error_code(answer)}")
    counter = iter(range(100, 1_000_000))

    def assertion_base() -> tuple[str, AssertionBase]:
        challenge_id, options = server.authentication_options()
        cdj = client_data("webauthn.get", options["challenge"], peer.origin)
        auth = authenticator_data(peer.rp_id, UP | UV, next(counter))
        return challenge_id, AssertionBase(fuzz_key, cdj, auth, fuzz_key.sign(auth + sha256(cdj)), peer.rp_id)

    def authenticate(mutate: Callable[[AssertionBase], tuple[bytes, bytes]]) -> tuple[int, Any]:
        challenge_id, base = assertion_base()
        auth, signature = mutate(base)
        body = assertion_json(fuzz_key, base.client_data, auth, signature, handle)
        return server.call("POST", "/api/v1/passkeys/authenticate", {"challenge_id": challenge_id, "credential": body})

    status, answer = authenticate(lambda b: (b.auth_data, b.signature))
    check("fuzzed assertions: the unmutated assertion is 200", status == 200, f"got {status} {error_code(answer)}")
    run_table("fuzzed assertions", assertion_table(rng), authenticate)
    status, _ = server.call("GET", "/api/v1/health")
    check("the server still answers /api/v1/health after the tables", status == 200, f"status {status}")


# --- 5: the log --------------------------------------------------------------------------------------------------


def check_log(server: Server, path: str) -> None:
    try:
        with open(path, encoding="utf-8", errors="replace") as file:
            log = file.read()
    except OSError as error:
        check("the server log is readable", False, str(error))
        return
    secrets = {s for s in server.secrets if len(s) >= 16}
    found = [s for s in secrets if s in log]
    check(f"the server log ({len(log.splitlines())} lines) holds none of the {len(secrets)} credential parts and tokens sent",
          not found, f"{len(found)} found")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument("base_url")
    parser.add_argument("--origin", required=True, help="an origin in the server's passkeys.origins")
    parser.add_argument("--rp-id", default="localhost")
    parser.add_argument("--server-log", help="the live server's log, checked for credentials at the end")
    parser.add_argument("--seed", type=int, default=33, help="the fuzzed table's RNG seed")
    args = parser.parse_args()
    server = Server(args.base_url)
    peer = Peer(server, args.origin, args.rp_id)
    started = time.monotonic()
    print(f"interop: passkeys of {server.base} (rp ID {args.rp_id}, origin {args.origin}) with py_webauthn")
    try:
        pair = server.device()
        handle = uuid.UUID(pair["user_id"]).bytes
        check_options(server, peer, pair)
        passkey = check_registration(server, peer, pair, handle)
        check_sign_in(server, peer, pair, passkey)
        check_fuzz(server, peer, server.device(), args.seed)
    except CheckFailed as error:
        check(str(error), False, "the run stopped here")
    if args.server_log:
        check_log(server, args.server_log)
    failed = RESULTS.count(False)
    print(f"passkey interop: {len(RESULTS) - failed} passed, {failed} failed in {time.monotonic() - started:.1f}s")
    return 1 if failed or not RESULTS else 0


if __name__ == "__main__":
    sys.exit(main())
