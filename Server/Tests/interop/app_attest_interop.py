#!/usr/bin/env python3
"""Interop test: App Attest (issue 34) with a test CA of its own, against live `latchkey serve` processes.

Usage: app_attest_interop.py --latchkey BIN [--parts objects,guests,metered,report,required,development,off,limits,startup]

Everything is made here, independently of the server's Swift code: a stand-in for Apple's App Attest CA made with
PyPI's `cryptography` (a P-384 root, an intermediate named "Apple App Attestation CA 1", and per device a leaf whose key
is the device's P-256 key and whose extension 1.2.840.113635.100.8.2 is DER SEQUENCE { [1] EXPLICIT OCTET STRING nonce }),
attestation objects and assertions encoded with PyPI's `cbor2` exactly as Apple's format: clientDataHash = SHA256(the 32
decoded challenge bytes); an assertion's clientDataHash = SHA256(b"POST" + b"/api/v1/auth/guest" + SHA256(body) +
challenge bytes), its signature ECDSA P-256 with SHA-256 over nonce = SHA256(authenticatorData + clientDataHash), DER.
The servers' clock is the real one: the CA and the leaves are valid now (an expired and a not-yet-valid leaf too).

Parts (--parts; default all; each part starts its own `latchkey serve` on SQLite in a temp dir, `app-attest.roots` = this
run's root PEM, every rate limit off, forward auth with the rule "POST /api/edit bearer actions"):
  objects      offline: every kind of object made here decodes back (cbor2), its chain verifies with cryptography, its
               nonce and key ID are right, its assertion signature verifies; the same reader accepts Apple's published 2026
               sample (Server/Tests/LatchkeyAppAttestTests/Fixtures), so the objects follow Apple's layout.
  guests       policy `guests` (debug tokens allowed): an unattested fresh UUID is refused a guest token (403
               attestation_required) while an attested one gets one with `att: true` and its meter (5 edits through
               forward auth with X-Latchkey-Attested: true, the sixth 429); base64url and iOS 27's extension map after the
               COSE key accepted; every refusal of the issue, each 400 invalid_attestation with nothing stored: wrong app
               ID, wrong nonce (also the challenge's text hashed instead of its bytes), key ID mismatch, credential ID
               mismatch, counter 1, the development AAGUID in production, an expired and a not-yet-valid leaf, a chain to
               another root (same names, other keys), no intermediate, another format, a key ID already attested; challenges
               (400 invalid_challenge): reused, spent by a failed attempt, unknown, two devices racing with one; assertions for later guest tokens (401
               invalid_assertion): missing, a stale or lower counter, another key, another app ID, another body or path, the
               nonce signed as a prehashed digest, two racing with one counter (one wins); flags 0x00 and bytes after the
               37-byte header accepted; register-device with and without attestation (`users/me` devices[].attested, `att`
               kept by refresh, `latchkey devices show --json`); a fuzzed table of malformed attestation objects and
               assertions (truncations, bit flips, wrong types, huge values; seeded RNG), each a 4xx with the error
               envelope, never a 5xx, nothing stored; debug tokens minted with `latchkey app-attest debug-token
               create|list|revoke` (audited, never logged); no token or debug token in a log line or an error message.
  metered      policy `guests` with `app-attest.unattested-guest-limit` 1, debug tokens not allowed: an unattested device
               gets a guest token metered at 1, an attested one at 5; a debug token is refused.
  report       policy `report` with `unattested-guest-limit` 2: a failing attestation is downgraded (a token without
               `att`, the device stays unattested), a good one is recorded; unattested devices metered at 2.
  required     policy `required`: register-device without attestation 403 attestation_required, with it 201 and `att`.
  development  `app-attest.environment` development, `app-attest.roots` naming a PEM file: the `appattestdevelop`
               AAGUID accepted, the production one refused.
  off          policy off and no app IDs: the challenge route 404, `app_attest` ignored (a guest token without `att`).
  limits       `limits.app-attest` 2 and `limits.app-attest-challenge` 3, client IPs from X-Forwarded-For (127.0.0.1 is
               a trusted proxy): attempts limited per key ID and per client IP (429 rate_limited), never globally.
  startup      a policy other than off with no app IDs: `latchkey serve` exits 78 naming app-attest.app-ids.

Needs cryptography and cbor2 (installed by scripts/test into its venv). Exits 0 when every check passes, 1 otherwise.
Never prints a token, a key or a debug token. Every process it starts and every temp dir it makes is removed on exit.
"""

from __future__ import annotations

import argparse
import base64
import datetime
import hashlib
import io
import json
import os
import random
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from typing import Any, Callable

import cbor2
from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import Prehashed
from cryptography.x509 import verification
from cryptography.x509.oid import NameOID

from interop_checks import RESULTS, CheckFailed, free_port, poll, serve, stop, stopped
from interop_checks import check as _check

TIMEOUT = 10  # seconds per HTTP request to a server
APP_ID = "ABCDE12345.com.example.latchkey"
SECOND_APP_ID = "ABCDE12345.com.example.latchkey.widget"  # the second entry of app-attest.app-ids
OTHER_APP_ID = "ZYXWV98765.com.example.other"  # in no list
ROOT_NAME = "Latchkey Interop App Attestation Root CA"
INTERMEDIATE_NAME = "Apple App Attestation CA 1"
NONCE_OID = x509.ObjectIdentifier("1.2.840.113635.100.8.2")
PRODUCTION_AAGUID = b"appattest" + bytes(7)
DEVELOPMENT_AAGUID = b"appattestdevelop"
# What iOS 27 appends after the COSE key without setting the ED flag (Apple's 2026 sample has exactly this map).
IOS27_EXTENSION = cbor2.dumps({"apple_bundle_version_01": "1", "apple_validation_category_01": b"\x01\x00\x00\x00"})
GUEST_PATH = "/api/v1/auth/guest"
METER_LIMIT = 5  # guest.max-actions-per-day: the default actions meter's guest limit
SEEN_SECRETS: set[str] = set()  # tokens and debug tokens of the run: none may be in a server's log
HERE = os.path.dirname(os.path.abspath(__file__))
APPLE_SAMPLE = os.path.join(HERE, "..", "LatchkeyAppAttestTests", "Fixtures", "apple-sample-attestation.b64")


def check(name: str, ok: Any, detail: str = "") -> bool:
    """A PASS/FAIL line (interop_checks.check); the detail only on a FAIL, where it says what came instead."""
    return _check(name, ok, "" if ok else detail)


def at_once(count: int, request: Callable[[int], Any]) -> list[Any]:
    """request(0) … request(count - 1) from as many threads released together; each answer (None: no answer in time)."""
    barrier = threading.Barrier(count)
    answers: list[Any] = [None] * count

    def run(i: int) -> None:
        barrier.wait()
        answers[i] = request(i)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(TIMEOUT + 5)
    return answers


def require(name: str, ok: bool, detail: str = "") -> None:
    """A check the following steps depend on (this suite's `check`: the detail only on a FAIL)."""
    if not check(name, ok, detail):
        raise CheckFailed(name, recorded=True)


def sha256(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()


def b64(data: bytes) -> str:
    """Standard padded base64, what the server emits."""
    return base64.b64encode(data).decode()


def b64url(data: bytes) -> str:
    """base64url without padding, which the server accepts too."""
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def claims_of(token: str) -> dict[str, Any]:
    payload = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


# ---------------------------------------------------------------- the test CA and the device
class Device:
    """A device: its Secure Enclave key stand-in (P-256), key ID = SHA256(X9.62 uncompressed key), its UUID."""

    def __init__(self) -> None:
        self.key = ec.generate_private_key(ec.SECP256R1())
        self.public_key = self.key.public_key().public_bytes(serialization.Encoding.X962,
                                                             serialization.PublicFormat.UncompressedPoint)
        self.key_id = sha256(self.public_key)
        self.id = str(uuid.uuid4())
        self.counter = 0  # the last assertion counter the server accepted


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name),
                      x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Apple Inc."),
                      x509.NameAttribute(NameOID.STATE_OR_PROVINCE_NAME, "California")])


CA_USAGE = x509.KeyUsage(digital_signature=False, content_commitment=False, key_encipherment=False,
                         data_encipherment=False, key_agreement=False, key_cert_sign=True, crl_sign=True,
                         encipher_only=False, decipher_only=False)


class TestCA:
    """A stand-in for Apple's App Attestation CA: root (P-384) -> "Apple App Attestation CA 1" (P-384) -> leaves.
    Two instances made with the same names differ only in their keys (a chain to another root fails on signatures)."""

    def __init__(self, root_name: str = ROOT_NAME) -> None:
        now = datetime.datetime.now(datetime.timezone.utc)
        self.root_key = ec.generate_private_key(ec.SECP384R1())
        self.intermediate_key = ec.generate_private_key(ec.SECP384R1())
        root_subject = _name(root_name)
        root_ski = x509.SubjectKeyIdentifier.from_public_key(self.root_key.public_key())
        self.root = (x509.CertificateBuilder().subject_name(root_subject).issuer_name(root_subject)
                     .public_key(self.root_key.public_key()).serial_number(x509.random_serial_number())
                     .not_valid_before(now - datetime.timedelta(days=365))
                     .not_valid_after(now + datetime.timedelta(days=3650))
                     .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
                     .add_extension(CA_USAGE, critical=True)
                     .add_extension(root_ski, critical=False)
                     .sign(self.root_key, hashes.SHA384()))
        self.intermediate = (x509.CertificateBuilder().subject_name(_name(INTERMEDIATE_NAME)).issuer_name(root_subject)
                             .public_key(self.intermediate_key.public_key()).serial_number(x509.random_serial_number())
                             .not_valid_before(now - datetime.timedelta(days=180))
                             .not_valid_after(now + datetime.timedelta(days=1800))
                             .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
                             .add_extension(CA_USAGE, critical=True)
                             .add_extension(x509.SubjectKeyIdentifier.from_public_key(self.intermediate_key.public_key()),
                                            critical=False)
                             .add_extension(x509.AuthorityKeyIdentifier.from_issuer_subject_key_identifier(root_ski),
                                            critical=False)
                             .sign(self.root_key, hashes.SHA384()))

    @property
    def root_pem(self) -> str:
        return self.root.public_bytes(serialization.Encoding.PEM).decode()

    @property
    def intermediate_der(self) -> bytes:
        return self.intermediate.public_bytes(serialization.Encoding.DER)

    def leaf(self, public_key: ec.EllipticCurvePublicKey, key_id: bytes, nonce: bytes, not_before: datetime.datetime,
             not_after: datetime.datetime) -> bytes:
        """A leaf certifying `public_key`, its extension 1.2.840.113635.100.8.2 = SEQUENCE { [1] { OCTET STRING nonce } }."""
        extension = bytes([0x30, 0x24, 0xA1, 0x22, 0x04, 0x20]) + nonce
        intermediate_ski = x509.SubjectKeyIdentifier.from_public_key(self.intermediate_key.public_key())
        leaf = (x509.CertificateBuilder().subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, key_id.hex())]))
                .issuer_name(self.intermediate.subject).public_key(public_key)
                .serial_number(x509.random_serial_number()).not_valid_before(not_before).not_valid_after(not_after)
                .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
                .add_extension(x509.AuthorityKeyIdentifier.from_issuer_subject_key_identifier(intermediate_ski),
                               critical=False)
                .add_extension(x509.UnrecognizedExtension(NONCE_OID, extension), critical=False)
                .sign(self.intermediate_key, hashes.SHA256()))
        return leaf.public_bytes(serialization.Encoding.DER)


def cose_key(public_key: bytes) -> bytes:
    """The credential public key as Apple writes it: {1: 2, 3: -7, -1: 1, -2: x, -3: y}."""
    return cbor2.dumps({1: 2, 3: -7, -1: 1, -2: public_key[1:33], -3: public_key[33:65]})


def auth_data(device: Device, app_id: str = APP_ID, flags: int = 0x40, counter: int = 0,
              aaguid: bytes = PRODUCTION_AAGUID, credential_id: bytes | None = None, cose: bytes | None = None,
              trailing: bytes = b"") -> bytes:
    credential = device.key_id if credential_id is None else credential_id
    return (sha256(app_id.encode()) + bytes([flags]) + counter.to_bytes(4, "big") + aaguid
            + len(credential).to_bytes(2, "big") + credential + (cose_key(device.public_key) if cose is None else cose)
            + trailing)


def attestation(ca: TestCA, device: Device, client_data_hash: bytes, *, fmt: Any = "apple-appattest",
                nonce_client_data_hash: bytes | None = None, leaf_valid: tuple[float, float] = (-3600, 3 * 86400),
                leaf_key: ec.EllipticCurvePublicKey | None = None, leaf_ca: TestCA | None = None,
                chain: list[bytes] | None = None, include_intermediate: bool = True,
                receipt: bytes | None = b"an App Attest receipt, opaque to the server", trailing_object: bytes = b"",
                **parts: Any) -> bytes:
    """An attestation object for `device` over `client_data_hash`; each keyword changes one thing (one refusal)."""
    data = auth_data(device, **parts)
    nonce = sha256(data + (client_data_hash if nonce_client_data_hash is None else nonce_client_data_hash))
    now = datetime.datetime.now(datetime.timezone.utc)
    issuer = leaf_ca or ca
    leaf = issuer.leaf(leaf_key or device.key.public_key(), device.key_id, nonce,
                       now + datetime.timedelta(seconds=leaf_valid[0]), now + datetime.timedelta(seconds=leaf_valid[1]))
    x5c = [leaf] + (chain if chain is not None else ([issuer.intermediate_der] if include_intermediate else []))
    statement: dict[str, Any] = {"x5c": x5c}
    if receipt is not None:
        statement["receipt"] = receipt
    return cbor2.dumps({"fmt": fmt, "attStmt": statement, "authData": data}) + trailing_object


def assertion_client_data_hash(body: bytes, challenge: bytes, method: str = "POST", path: str = GUEST_PATH) -> bytes:
    """SHA256(method ‖ path ‖ SHA256(body) ‖ challenge bytes): the raw concatenation, no separators."""
    return sha256(method.encode() + path.encode() + sha256(body) + challenge)


def assertion(device: Device, client_data_hash: bytes, counter: int, *, app_id: str = APP_ID, flags: int = 0x40,
              trailing: bytes = b"", signer: ec.EllipticCurvePrivateKey | None = None, prehashed: bool = False) -> bytes:
    """CBOR {signature, authenticatorData}: ES256 over nonce = SHA256(authenticatorData ‖ clientDataHash), i.e. ECDSA
    with SHA-256 over the nonce, as iOS signs (prehashed: the nonce handed over as the digest, which iOS never does)."""
    authenticator_data = sha256(app_id.encode()) + bytes([flags]) + counter.to_bytes(4, "big") + trailing
    nonce = sha256(authenticator_data + client_data_hash)
    key = signer or device.key
    algorithm = ec.ECDSA(Prehashed(hashes.SHA256())) if prehashed else ec.ECDSA(hashes.SHA256())
    return cbor2.dumps({"signature": key.sign(nonce, algorithm), "authenticatorData": authenticator_data})


# ---------------------------------------------------------------- reading objects back (part: objects)
def der_nonce(extension: bytes) -> bytes | None:
    """The OCTET STRING of SEQUENCE { [1] EXPLICIT OCTET STRING } (short DER lengths only, as the nonce has)."""
    if len(extension) < 6 or extension[0] != 0x30 or extension[1] != len(extension) - 2:
        return None
    if extension[2] != 0xA1 or extension[3] != len(extension) - 4 or extension[4] != 0x04 or extension[5] != len(extension) - 6:
        return None
    return extension[6:]


def read_attestation(obj: bytes, client_data_hash: bytes, key_id: bytes, app_id: str, aaguid: bytes,
                     root: x509.Certificate | None) -> list[str]:
    """Apple's steps, read independently of the server: the problems found (none: the object is well-formed and right)."""
    problems: list[str] = []
    stream = io.BytesIO(obj)
    top = cbor2.CBORDecoder(stream).decode()
    if stream.read():
        problems.append("bytes after the object")
    if not isinstance(top, dict) or set(top) != {"fmt", "attStmt", "authData"}:
        return problems + ["not a map of fmt, attStmt, authData"]
    statement, data = top["attStmt"], top["authData"]
    if top["fmt"] != "apple-appattest":
        problems.append("fmt")
    if not isinstance(statement.get("receipt"), bytes):
        problems.append("receipt")
    x5c = statement.get("x5c")
    if not isinstance(x5c, list) or len(x5c) < 2:
        return problems + ["x5c"]
    certificates = [x509.load_der_x509_certificate(der) for der in x5c]
    try:
        certificates[0].verify_directly_issued_by(certificates[1])
        if root is not None:
            certificates[1].verify_directly_issued_by(root)
    except (InvalidSignature, ValueError, TypeError) as error:
        problems.append(f"chain: {error!r}")
    leaf = certificates[0]
    nonce = der_nonce(leaf.extensions.get_extension_for_oid(NONCE_OID).value.value)
    if nonce != sha256(data + client_data_hash):
        problems.append("nonce")
    public_key = leaf.public_key().public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
    if sha256(public_key) != key_id:
        problems.append("key ID")
    if data[:32] != sha256(app_id.encode()):
        problems.append("rpIdHash")
    if int.from_bytes(data[33:37], "big") != 0:
        problems.append("counter")
    if data[37:53] != aaguid:
        problems.append("AAGUID")
    length = int.from_bytes(data[53:55], "big")
    if data[55:55 + length] != key_id:
        problems.append("credential ID")
    rest = io.BytesIO(data[55 + length:])
    cose = cbor2.CBORDecoder(rest).decode()
    if not isinstance(cose, dict) or b"\x04" + cose.get(-2, b"") + cose.get(-3, b"") != public_key:
        problems.append("COSE key")
    trailing = rest.read()
    if trailing and not isinstance(cbor2.loads(trailing), dict):
        problems.append("the bytes after the COSE key are not a CBOR map")
    return problems


def path_error(obj: bytes, root: x509.Certificate) -> str | None:
    """RFC 5280 path validation of the object's x5c at this moment by cryptography's verifier (Web PKI rules for the
    CAs, any extension on the leaf): None when the chain is valid, else why not."""
    x5c = [x509.load_der_x509_certificate(der) for der in cbor2.loads(obj)["attStmt"]["x5c"]]
    builder = (verification.PolicyBuilder().store(verification.Store([root]))
               .time(datetime.datetime.now(datetime.timezone.utc))
               .extension_policies(ca_policy=verification.ExtensionPolicy.webpki_defaults_ca(),
                                   ee_policy=verification.ExtensionPolicy.permit_all()))
    try:
        builder.build_client_verifier().verify(x5c[0], x5c[1:])
        return None
    except verification.VerificationError as error:
        return str(error)


def objects_part() -> None:
    print("objects: what this suite makes, read back independently")
    ca, device = TestCA(), Device()
    challenge = secrets.token_bytes(32)
    cdh = sha256(challenge)
    for label, obj, aaguid in (
            ("an attestation object", attestation(ca, device, cdh), PRODUCTION_AAGUID),
            ("one with iOS 27's map after the COSE key", attestation(ca, device, cdh, trailing=IOS27_EXTENSION),
             PRODUCTION_AAGUID),
            ("a development one", attestation(ca, device, cdh, aaguid=DEVELOPMENT_AAGUID), DEVELOPMENT_AAGUID)):
        problems = read_attestation(obj, cdh, device.key_id, APP_ID, aaguid, ca.root)
        check(f"{label} decodes back (cbor2), chains to the test root, nonce and key ID right", not problems,
              str(problems) if problems else "")
    wrong = read_attestation(attestation(ca, device, cdh, nonce_client_data_hash=sha256(b"other")), cdh, device.key_id,
                             APP_ID, PRODUCTION_AAGUID, ca.root)
    check("a wrong-nonce object is wrong only in its nonce (the reader can fail)", wrong == ["nonce"],
          "" if wrong == ["nonce"] else str(wrong))
    other = read_attestation(attestation(ca, device, cdh, leaf_ca=TestCA()), cdh, device.key_id, APP_ID,
                             PRODUCTION_AAGUID, ca.root)
    ok = len(other) == 1 and "chain" in other[0]
    check("a leaf of another CA with the same names fails on the signature only", ok, "" if ok else str(other))
    good = path_error(attestation(ca, device, cdh), ca.root)
    check("cryptography's RFC 5280 path validation accepts the chain now", good is None, good or "")
    for label, parts in (("an expired leaf", {"leaf_valid": (-3 * 86400, -86400)}),
                         ("a leaf not yet valid", {"leaf_valid": (86400, 3 * 86400)}),
                         ("a chain to another root with the same names", {"leaf_ca": TestCA()}),
                         ("a leaf of another CA beside this CA's intermediate", {"leaf_ca": TestCA(),
                                                                                "chain": [ca.intermediate_der]})):
        check(f"... and refuses {label}", path_error(attestation(ca, device, cdh, **parts), ca.root) is not None)
    with open(APPLE_SAMPLE) as f:
        apple = base64.b64decode(f.read().strip())
    problems = read_attestation(apple, b"example_server_challenge",
                                base64.b64decode("zgSY9YSD+7TaDXssY6WlOPVS1K3Lmk+pFhlcSWE+ZV0="),
                                "1234567890.com.example.myapp", PRODUCTION_AAGUID, None)
    check("the same reader accepts Apple's 2026 sample (its layout is this suite's)", not problems,
          str(problems) if problems else "")
    body = b'{"app_attest":null}'
    made = cbor2.loads(assertion(device, assertion_client_data_hash(body, challenge), 7))
    data = made["authenticatorData"]
    nonce = sha256(data + assertion_client_data_hash(body, challenge))
    try:
        device.key.public_key().verify(made["signature"], nonce, ec.ECDSA(hashes.SHA256()))
        verified = True
    except InvalidSignature:
        verified = False
    check("an assertion decodes back, 37 bytes of authenticator data, counter 7, its signature ECDSA-SHA256 over the nonce",
          verified and len(data) == 37 and int.from_bytes(data[33:37], "big") == 7 and set(made) == {"signature",
                                                                                                    "authenticatorData"})
    prehashed = cbor2.loads(assertion(device, assertion_client_data_hash(body, challenge), 7, prehashed=True))
    try:
        device.key.public_key().verify(prehashed["signature"], nonce, ec.ECDSA(hashes.SHA256()))
        wrong_way = True
    except InvalidSignature:
        wrong_way = False
    check("a prehashed-nonce assertion does not verify the way iOS signs (the refusal below is a real one)", not wrong_way)


# ---------------------------------------------------------------- HTTP
def call(method: str, url: str, body: Any = None, raw: bytes | None = None, headers: dict[str, str] | None = None,
         bearer: str | None = None) -> tuple[int, Any, dict[str, str]]:
    """(status, parsed JSON or None, headers with lowercase names). Never raises on an HTTP status."""
    sent = {"Accept": "application/json", **(headers or {})}
    data = raw
    if body is not None:
        data = json.dumps(body).encode()
    if data:
        sent.setdefault("Content-Type", "application/json")
    if bearer is not None:
        sent["Authorization"] = f"Bearer {bearer}"
    request = urllib.request.Request(url, method=method, headers=sent, data=data)
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
            status, text, answer_headers = response.status, response.read(), response.headers
    except urllib.error.HTTPError as error:
        status, text, answer_headers = error.code, error.read(), error.headers
    except (urllib.error.URLError, OSError) as error:
        raise CheckFailed(f"{method} {urllib.parse.urlsplit(url).path}: cannot connect: {error}") from error
    lowered = {k.lower(): v for k, v in answer_headers.items()}
    try:
        parsed = json.loads(text) if text else None
    except ValueError:
        parsed = None
    if isinstance(parsed, dict):
        for key in ("access_token", "refresh_token", "device_secret"):
            if isinstance(parsed.get(key), str) and len(parsed[key]) >= 8:
                SEEN_SECRETS.add(parsed[key])
    return status, parsed, lowered


def error_code(answer: Any) -> str | None:
    return answer.get("error", {}).get("code") if isinstance(answer, dict) and isinstance(answer.get("error"), dict) else None


def envelope(answer: Any) -> bool:
    """{"error": {"code": str, "message": str}}."""
    error = answer.get("error") if isinstance(answer, dict) else None
    return isinstance(error, dict) and isinstance(error.get("code"), str) and isinstance(error.get("message"), str)


def answered(result: tuple[int, Any, dict[str, str]]) -> str:
    return f"got {result[0]} {error_code(result[1]) or ''}".rstrip()


def refused(name: str, result: tuple[int, Any, dict[str, str]], status: int, code: str) -> bool:
    ok = result[0] == status and envelope(result[1]) and error_code(result[1]) == code
    return check(f"{name} -> {status} {code}", ok, "" if ok else answered(result))


def issued(name: str, result: tuple[int, Any, dict[str, str]], attested: bool, status: int = 201) -> dict[str, Any] | None:
    """Checks a token answer (`status`, `att: true` exactly when `attested`); its claims, or None."""
    st, answer, _ = result
    token = answer.get("access_token") if isinstance(answer, dict) else None
    claims = claims_of(token) if isinstance(token, str) and token.count(".") == 2 else None
    ok = st == status and claims is not None and (claims.get("att") is True if attested else "att" not in claims)
    detail = "" if ok else f"{answered(result)}; att {claims.get('att') if claims else '(no token)'}"
    check(f"{name} -> {status}, {'att: true' if attested else 'no att claim'}", ok, detail)
    return claims if ok else None


# ---------------------------------------------------------------- latchkey serve
class Server:
    PROCESSES: list["Server"] = []

    def __init__(self, binary: str, workdir: str, name: str, config: dict[str, Any]) -> None:
        self.binary, self.name = binary, name
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.config_path = os.path.join(workdir, f"{name}.json")
        self.log_path = os.path.join(workdir, f"{name}.log")
        fd = os.open(self.config_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            json.dump(config, f)
        self.process: subprocess.Popen | None = None
        self.five_hundreds: list[str] = []
        self.messages: list[str] = []  # every error message answered
        Server.PROCESSES.append(self)

    @staticmethod
    def environment() -> dict[str, str]:
        return {k: v for k, v in os.environ.items() if not k.startswith("LATCHKEY_")}

    def start(self, seconds: float = 60) -> None:
        self.process = serve(
            self.binary, self.port, self.base, self.config_path, self.log_path, self.environment(), self.name, self.tail, seconds)

    def stop(self) -> None:
        stop(self.process)

    def tail(self, lines: int = 15) -> str:
        return "".join(self.log().splitlines(keepends=True)[-lines:])

    def log(self) -> str:
        try:
            with open(self.log_path, errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def cli(self, *args: str) -> subprocess.CompletedProcess:
        """`latchkey <args> --config <this server's config>` (the same database and settings)."""
        return subprocess.run([self.binary, *args, "--config", self.config_path], capture_output=True, text=True,
                              timeout=60, env=self.environment(), stdin=subprocess.DEVNULL)

    def call(self, method: str, path: str, **kwargs: Any) -> tuple[int, Any, dict[str, str]]:
        result = call(method, self.base + path, **kwargs)
        if result[0] >= 500:
            self.five_hundreds.append(f"{method} {path} {result[0]}")
        if result[0] >= 400 and envelope(result[1]):
            self.messages.append(result[1]["error"]["message"])
        return result

    # The API as an app uses it.
    def challenge(self, ip: str | None = None) -> str:
        headers = {"X-Forwarded-For": ip} if ip else None
        status, answer, _ = self.call("POST", "/api/v1/app-attest/challenge", headers=headers)
        challenge = answer.get("challenge") if isinstance(answer, dict) else None
        if status != 200 or not isinstance(challenge, str):
            raise CheckFailed(f"POST /api/v1/app-attest/challenge answers 200 {{challenge}} (got {status} {error_code(answer)})")
        return challenge

    def guest(self, device_id: str, body: Any = None, raw: bytes | None = None,
              headers: dict[str, str] | None = None) -> tuple[int, Any, dict[str, str]]:
        return self.call("POST", GUEST_PATH, body=body, raw=raw, headers={"X-Device-ID": device_id, **(headers or {})})

    def register_device(self, device_id: str, app_attest: Any = None) -> tuple[int, Any, dict[str, str]]:
        body: dict[str, Any] = {"device_id": device_id}
        if app_attest is not None:
            body["app_attest"] = app_attest
        return self.call("POST", "/api/v1/auth/register-device", body=body)

    def edit(self, token: str, device_id: str) -> tuple[int, Any, dict[str, str]]:
        """Forward auth as nginx asks it: may this guest POST /api/edit (rule "POST /api/edit bearer actions")?"""
        return self.call("GET", "/api/v1/authorize", bearer=token,
                         headers={"X-Original-Method": "POST", "X-Original-URI": "/api/edit", "X-Device-ID": device_id})


def evidence(server: Server, ca: TestCA, device: Device, *, challenge: str | None = None, client_data_hash: bytes | None = None,
             key_id: bytes | None = None, encode: Callable[[bytes], str] = b64, **parts: Any) -> dict[str, str]:
    """`app_attest` for a fresh challenge (or `challenge`): clientDataHash = SHA256(the challenge's 32 decoded bytes)."""
    text = challenge or server.challenge()
    cdh = sha256(base64.b64decode(text)) if client_data_hash is None else client_data_hash
    obj = attestation(ca, device, cdh, **parts)
    return {"key_id": encode(device.key_id if key_id is None else key_id), "attestation_object": encode(obj),
            "challenge": text}


def attest_as_guest(server: Server, ca: TestCA, device: Device, name: str, **parts: Any) -> dict[str, Any] | None:
    """A guest token for a fresh device through `app_attest` in the guest body; its claims when it has `att: true`."""
    return issued(name, server.guest(device.id, {"app_attest": evidence(server, ca, device, **parts)}), attested=True)


def assert_guest(server: Server, device: Device, counter: int, *, body: bytes = b"", sent_body: bytes | None = None,
                 challenge: str | None = None, path: str = GUEST_PATH, **options: Any) -> tuple[int, Any, dict[str, str]]:
    """A guest request of an attested device with X-App-Attest-Assertion over (POST, `path`, body, a fresh challenge)."""
    text = challenge or server.challenge()
    cdh = assertion_client_data_hash(body, base64.b64decode(text), path=path)
    made = assertion(device, cdh, counter, **options)
    return server.guest(device.id, raw=body if sent_body is None else sent_body,
                        headers={"X-App-Attest-Assertion": b64(made), "X-App-Attest-Challenge": text})


def not_stored(server: Server, device: Device, what: str) -> None:
    """Under `guests`, an unattested device is refused a guest token with 403: nothing was stored for it."""
    refused(f"  ... nothing stored ({what}): its guest request without attestation", server.guest(device.id), 403,
            "attestation_required")


def base_config(workdir: str, name: str, app_attest: dict[str, Any] | None, ca: TestCA | None,
                limits_set: dict[str, Any] | None = None, root_as_file: bool = False) -> dict[str, Any]:
    """SQLite in the temp dir, every rate limit off (but `limits_set`), forward auth for POST /api/edit, `app-attest`."""
    limits: dict[str, Any] = {key: {"limit": 0} for key in ("register-device", "refresh", "sign-in", "register-user",
                                                            "guest", "app-attest", "app-attest-challenge")}
    limits.update(limits_set or {})
    limits["guest-per-network"] = 0
    limits["trusted-proxies"] = ["127.0.0.1"]
    config: dict[str, Any] = {
        "database": os.path.join(workdir, f"{name}.sqlite"),
        "master-key-file": os.path.join(workdir, f"{name}.master.key"),
        "limits": limits,
        "authorize": {"routes": ["POST /api/edit bearer actions"]},
    }
    if app_attest is not None:
        config["app-attest"] = dict(app_attest)
        if ca is not None and root_as_file:  # an entry not starting with -----BEGIN is a file's path
            path = os.path.join(workdir, f"{name}.root.pem")
            with open(path, "w") as f:
                f.write(ca.root_pem)
            config["app-attest"]["roots"] = [path]
        elif ca is not None:
            config["app-attest"]["roots"] = [ca.root_pem]
    return config


def with_server(binary: str, workdir: str, name: str, app_attest: dict[str, Any] | None, ca: TestCA | None,
                body: Callable[[Server], None], limits: dict[str, Any] | None = None) -> None:
    server = Server(binary, workdir, name, base_config(workdir, name, app_attest, ca, limits, root_as_file=name == "development"))
    started = False
    try:
        server.start()
        started = True
        body(server)
    except CheckFailed as failure:
        stopped(failure, f"the {name} part")
    finally:
        if started:
            check(f"{name}: the server is still up and ready after the part",
                  server.process.poll() is None and poll(lambda: call_ok(server), 5))
        server.stop()
    if started:
        check(f"{name}: no 5xx answer in the part", not server.five_hundreds, ", ".join(server.five_hundreds[:5]))
        log = server.log()
        leaked = [s for s in SEEN_SECRETS if s in log]
        check(f"{name}: no token or debug token of the run in the server's log ({len(SEEN_SECRETS)} known)", not leaked)
        told = [m for m in server.messages if any(s in m for s in SEEN_SECRETS)]
        check(f"{name}: no token or debug token in any of the {len(server.messages)} error messages", not told)


def call_ok(server: Server) -> bool:
    try:
        return call("GET", server.base + "/api/v1/health/ready")[0] == 200
    except CheckFailed:
        return False


# ---------------------------------------------------------------- part: guests
def guests_part(server: Server, ca: TestCA) -> None:
    log = server.log()
    check("a warning at start names app-attest.roots",
          any("app-attest.roots" in line and "warn" in line.lower() for line in log.splitlines()),
          "no such line in the log")

    print("guests: the challenge")
    status, answer, _ = server.call("POST", "/api/v1/app-attest/challenge")
    text = answer.get("challenge") if isinstance(answer, dict) else None
    try:
        raw = base64.b64decode(text, validate=True) if isinstance(text, str) else b""
    except ValueError:
        raw = b""
    check("POST /api/v1/app-attest/challenge -> 200 {challenge}: 32 bytes, standard padded base64",
          status == 200 and len(raw) == 32 and text == b64(raw), f"{status} {text!r}"[:120])
    check("two challenges differ", server.challenge() != server.challenge())

    print("guests: the end-to-end run (policy guests)")
    stranger = Device()
    refused("an unattested fresh UUID asks for a guest token", server.guest(stranger.id), 403, "attestation_required")
    refused("... also with an empty app_attest body", server.guest(stranger.id, {}), 403, "attestation_required")
    device = Device()
    result = server.guest(device.id, {"app_attest": evidence(server, ca, device)})
    claims = issued("an attested device (app_attest in the guest body) gets a guest token", result, attested=True)
    require("... a guest token for that device", claims is not None and claims.get("sub") == f"guest:{device.id}"
            and claims.get("kind") == "guest", str(claims and {k: claims.get(k) for k in ("sub", "kind")}))
    token = result[1]["access_token"]
    edits = [server.edit(token, device.id) for _ in range(METER_LIMIT)]
    check(f"its meter: {METER_LIMIT} edits pass forward auth", all(e[0] == 200 for e in edits), str([e[0] for e in edits]))
    check("... each with X-Latchkey-Attested: true and X-Latchkey-Kind: guest",
          all(e[2].get("x-latchkey-attested") == "true" and e[2].get("x-latchkey-kind") == "guest" for e in edits),
          str([(e[2].get("x-latchkey-attested"), e[2].get("x-latchkey-kind")) for e in edits[:1]]))
    sixth = server.edit(token, device.id)
    refused(f"... edit {METER_LIMIT + 1}", sixth, 429, "rate_limited")

    print("guests: assertions for the attested device's later guest tokens")
    refused("a later guest request without an assertion", server.guest(device.id), 401, "invalid_assertion")
    device.counter = 1
    issued("an assertion (counter 1, empty body, a fresh challenge)", assert_guest(server, device, 1), attested=True)
    issued("an assertion over a JSON body (counter 2)", assert_guest(server, device, 2, body=b"{}"), attested=True)
    device.counter = 2
    stale = server.challenge()
    refused("an assertion with a stale counter (2 again)", assert_guest(server, device, 2, challenge=stale), 401,
            "invalid_assertion")
    refused("... its challenge is spent by that refusal (counter 3 with it)", assert_guest(server, device, 3, challenge=stale),
            400, "invalid_challenge")
    refused("an assertion with a lower counter (1)", assert_guest(server, device, 1), 401, "invalid_assertion")
    other = Device()
    refused("an assertion signed by another key (counter 100)",
            assert_guest(server, device, 100, signer=other.key), 401, "invalid_assertion")
    refused("an assertion for another app ID", assert_guest(server, device, 101, app_id=OTHER_APP_ID), 401,
            "invalid_assertion")
    refused("an assertion over another body than the one sent",
            assert_guest(server, device, 102, body=b"{}", sent_body=b'{"app_attest":null}'), 401, "invalid_assertion")
    refused("an assertion over another path (register-device)",
            assert_guest(server, device, 103, path="/api/v1/auth/register-device"), 401, "invalid_assertion")
    refused("an assertion whose nonce was signed as a prehashed digest", assert_guest(server, device, 104, prehashed=True),
            401, "invalid_assertion")
    spent = server.challenge()
    issued("an assertion with flags 0x00 and bytes after the 37-byte header (counter 3: the refusals stored nothing)",
           assert_guest(server, device, 3, flags=0x00, trailing=b"\x01\x02\x03", challenge=spent), attested=True)
    device.counter = 3
    refused("an assertion with a challenge already used (counter 4)", assert_guest(server, device, 4, challenge=spent),
            400, "invalid_challenge")
    unknown = b64(secrets.token_bytes(32))
    refused("an assertion with a challenge the server never issued", assert_guest(server, device, 5, challenge=unknown),
            400, "invalid_challenge")
    made = assertion(device, assertion_client_data_hash(b"", secrets.token_bytes(32)), 6)
    result = server.guest(device.id, headers={"X-App-Attest-Assertion": b64(made)})
    check("an assertion without X-App-Attest-Challenge -> 4xx invalid_challenge or invalid_assertion",
          result[0] in (400, 401) and envelope(result[1]) and error_code(result[1]) in ("invalid_challenge",
                                                                                        "invalid_assertion"),
          answered(result))
    # Two racing assertions with one counter, each with its own fresh challenge: exactly one wins.
    challenges = [server.challenge(), server.challenge()]
    made = [assertion(device, assertion_client_data_hash(b"", base64.b64decode(challenges[i])), 7) for i in (0, 1)]
    results = at_once(2, lambda i: server.guest(device.id, raw=b"", headers={"X-App-Attest-Assertion": b64(made[i]),
                                                                              "X-App-Attest-Challenge": challenges[i]}))
    statuses = sorted(r[0] if r else 0 for r in results)
    codes = [error_code(r[1]) for r in results if r and r[0] != 201]
    check("two racing assertions with one counter (7): one 201, the other 401 invalid_assertion",
          statuses == [201, 401] and codes == ["invalid_assertion"], f"{statuses} {codes}")
    device.counter = 7
    issued("the next counter (8) still works", assert_guest(server, device, 8), attested=True)
    text = server.challenge()
    made = assertion(device, assertion_client_data_hash(b"", base64.b64decode(text)), 9)
    issued("an assertion header in base64url without padding (counter 9)",
           server.guest(device.id, raw=b"", headers={"X-App-Attest-Assertion": b64url(made), "X-App-Attest-Challenge": text}),
           attested=True)
    device.counter = 9

    print("guests: attestations that pass")
    second = Device()
    attest_as_guest(server, ca, second, "base64url without padding for key_id and attestation_object", encode=b64url)
    ios27 = Device()
    attest_as_guest(server, ca, ios27, "iOS 27's extension map after the COSE key, flags 0x40 (no ED)",
                    trailing=IOS27_EXTENSION)
    widget = Device()
    attest_as_guest(server, ca, widget, "the second app ID of app-attest.app-ids", app_id=SECOND_APP_ID)
    issued("an iOS 27 device's assertion (the key stored from that object)", assert_guest(server, ios27, 1), attested=True)

    print("guests: attestations refused (400 invalid_attestation, nothing stored)")
    other_root = TestCA()
    now_plus = 86400
    cases: list[tuple[str, dict[str, Any]]] = [
        ("wrong app ID", {"app_id": OTHER_APP_ID}),
        ("wrong nonce (the leaf's nonce over another clientDataHash)", {"nonce_client_data_hash": sha256(b"another")}),
        ("counter 1", {"counter": 1}),
        ("the development AAGUID in production", {"aaguid": DEVELOPMENT_AAGUID}),
        ("an expired leaf", {"leaf_valid": (-3 * now_plus, -now_plus)}),
        ("a leaf not yet valid", {"leaf_valid": (now_plus, 3 * now_plus)}),
        ("a chain to another root (the same names, other keys)", {"leaf_ca": other_root}),
        ("a leaf of another CA presented with this CA's intermediate (fails on the signature, not on names)",
         {"leaf_ca": other_root, "chain": [ca.intermediate_der]}),
        ("no intermediate in x5c", {"include_intermediate": False}),
        ("fmt packed", {"fmt": "packed"}),
        ("the credential ID not the key ID", {"credential_id": Device().key_id}),
        ("a leaf certifying another key than the key ID's", {"leaf_key": Device().key.public_key()}),
        ("a COSE key of another key", {"cose": cose_key(Device().public_key)}),
        ("no receipt", {"receipt": None}),
        ("bytes after the attestation object", {"trailing_object": b"\x00"}),
    ]
    for name, parts in cases:
        victim = Device()
        refused(name, server.guest(victim.id, {"app_attest": evidence(server, ca, victim, **parts)}), 400,
                "invalid_attestation")
        not_stored(server, victim, name)
    victim = Device()
    refused("key ID mismatch (the key ID of another device)",
            server.guest(victim.id, {"app_attest": evidence(server, ca, victim, key_id=Device().key_id)}), 400,
            "invalid_attestation")
    not_stored(server, victim, "key ID mismatch")
    victim = Device()
    text = server.challenge()
    refused("clientDataHash = SHA256 of the challenge's base64 text, not of its bytes",
            server.guest(victim.id, {"app_attest": evidence(server, ca, victim, challenge=text,
                                                            client_data_hash=sha256(text.encode()))}),
            400, "invalid_attestation")
    refused("... the same challenge, now right, was spent by that failure",
            server.guest(victim.id, {"app_attest": evidence(server, ca, victim, challenge=text)}), 400, "invalid_challenge")
    not_stored(server, victim, "a spent challenge")
    victim = Device()
    clone = Device.__new__(Device)
    clone.__dict__.update(second.__dict__)
    clone.id = victim.id
    refused("the key of an already attested device on another device ID",
            server.guest(victim.id, {"app_attest": evidence(server, ca, clone)}), 400, "invalid_attestation")
    not_stored(server, victim, "a key ID already attested")

    print("guests: challenges")
    victim, used = Device(), Device()
    text = server.challenge()
    issued("an attestation with a fresh challenge", server.guest(used.id, {"app_attest": evidence(server, ca, used,
                                                                                                  challenge=text)}),
           attested=True)
    refused("a reused challenge (another device, a right object)",
            server.guest(victim.id, {"app_attest": evidence(server, ca, victim, challenge=text)}), 400,
            "invalid_challenge")
    refused("a challenge the server never issued",
            server.guest(victim.id, {"app_attest": evidence(server, ca, victim, challenge=b64(secrets.token_bytes(32)))}),
            400, "invalid_challenge")
    # One challenge, two devices at once: it is single use under concurrency too.
    text = server.challenge()
    racers = [Device(), Device()]
    bodies = [{"app_attest": evidence(server, ca, racer, challenge=text)} for racer in racers]
    answers = at_once(2, lambda i: server.guest(racers[i].id, bodies[i]))
    statuses = sorted(a[0] if a else 0 for a in answers)
    codes = [error_code(a[1]) for a in answers if a and a[0] != 201]
    check("two devices racing with one challenge: one 201, the other 400 invalid_challenge",
          statuses == [201, 400] and codes == ["invalid_challenge"], f"{statuses} {codes}")
    bad = evidence(server, ca, victim)
    bad["key_id"] = "not base64!"
    result = server.guest(victim.id, {"app_attest": bad})
    check("a key_id that is not base64 -> 400 invalid_request",
          result[0] == 400 and envelope(result[1]) and error_code(result[1]) == "invalid_request", answered(result))
    not_stored(server, victim, "refused challenges")

    print("guests: register-device")
    device_of_guest = device.id
    plain = Device()
    status, pair, _ = server.register_device(plain.id)
    require("register-device without app_attest under guests -> 201", status == 201, f"{status} {error_code(pair)}")
    check("... its token has no att", "att" not in claims_of(pair["access_token"]))
    status, _, headers = server.call("GET", "/api/v1/authorize", bearer=pair["access_token"],
                                     headers={"X-Original-Method": "POST", "X-Original-URI": "/api/edit"})
    check("... forward auth answers its token without X-Latchkey-Attested",
          status == 200 and "x-latchkey-attested" not in headers, f"{status} {headers.get('x-latchkey-attested')}")
    status, me, _ = server.call("GET", "/api/v1/users/me", bearer=pair["access_token"])
    devices = me.get("devices") if isinstance(me, dict) else None
    check("... users/me lists its device attested: false",
          status == 200 and isinstance(devices, list) and any(d.get("attested") is False for d in devices), str(devices)[:200])
    failing = Device()
    refused("register-device with a failing app_attest (wrong app ID) under guests",
            server.register_device(failing.id, evidence(server, ca, failing, app_id=OTHER_APP_ID)), 400,
            "invalid_attestation")
    status, pair, _ = server.register_device(failing.id)
    check("... nothing stored: the same device ID registers afresh (201, no secret asked)", status == 201,
          f"{status} {error_code(pair)}")
    good = Device()
    result = server.register_device(good.id, evidence(server, ca, good))
    claims = issued("register-device with a good app_attest", result, attested=True)
    if claims:
        pair = result[1]
        status, me, _ = server.call("GET", "/api/v1/users/me", bearer=pair["access_token"])
        devices = me.get("devices") if isinstance(me, dict) else []
        mine = [d for d in devices or [] if str(d.get("id", d.get("device_id", ""))).lower() == good.id]
        check("... users/me shows the device attested: true",
              status == 200 and (mine[0].get("attested") is True if mine else any(d.get("attested") is True for d in devices or [])),
              str(devices)[:200])
        for label, who, attested in (("the device attested at register-device", good.id, True),
                                     ("the device registered without app_attest", plain.id, False),
                                     ("a guest-attested device ID (no device row)", device_of_guest, True)):
            shown = server.cli("devices", "show", who, "--json")
            try:
                value = json.loads(shown.stdout).get("attested")
            except (ValueError, AttributeError):
                value = None
            check(f"`latchkey devices show --json`: {label} attested: {str(attested).lower()}",
                  shown.returncode == 0 and value is attested, f"exit {shown.returncode}: {shown.stdout.strip()[:160]}")
        result = server.call("POST", "/api/v1/auth/refresh", body={"refresh_token": pair["refresh_token"]})
        issued("... a refresh needs no attestation and keeps att: true", result, attested=True, status=200)
        if result[0] == 200:
            status, _, headers = server.call("GET", "/api/v1/authorize", bearer=result[1]["access_token"],
                                             headers={"X-Original-Method": "POST", "X-Original-URI": "/api/edit"})
            check("... forward auth answers its token with X-Latchkey-Attested: true",
                  status == 200 and headers.get("x-latchkey-attested") == "true",
                  f"{status} {headers.get('x-latchkey-attested')}")


def fuzz_part(server: Server, ca: TestCA) -> None:
    """Malformed attestation objects and assertions: every answer a 4xx with the error envelope, nothing stored."""
    print("guests: a fuzzed table of malformed attestation objects (seeded)")
    rng = random.Random(34)
    device = Device()
    base = attestation(ca, device, sha256(bytes(32)), receipt=b"rcpt")
    receipt_at = base.find(b"rcpt")

    def head(major: int, value: int) -> bytes:
        if value < 24:
            return bytes([major << 5 | value])
        for size, code in ((1, 24), (2, 25), (4, 26), (8, 27)):
            if value < 1 << (8 * size):
                return bytes([major << 5 | code]) + value.to_bytes(size, "big")
        raise ValueError(value)

    leaf_der = cbor2.loads(base)["attStmt"]["x5c"][0]
    data = cbor2.loads(base)["authData"]

    def obj(**fields: Any) -> bytes:
        value = {"fmt": "apple-appattest", "attStmt": {"x5c": [leaf_der, ca.intermediate_der], "receipt": b"r"},
                 "authData": data}
        value.update(fields)
        return cbor2.dumps({k: v for k, v in value.items() if v is not ...})

    table: list[tuple[str, bytes]] = []
    for length in sorted(set([0, 1, 2, 3, 5, 8, 13, 21, 34, len(base) // 2, len(base) - 1]
                             + rng.sample(range(1, len(base)), 30))):
        table.append((f"truncated to {length} bytes", base[:length]))
    flips = 0
    while flips < 80:
        at = rng.randrange(len(base))
        if receipt_at <= at < receipt_at + 4:
            continue  # the receipt is opaque: a flip there leaves a good object
        flipped = bytearray(base)
        flipped[at] ^= 1 << rng.randrange(8)
        table.append((f"bit flip at byte {at}", bytes(flipped)))
        flips += 1
    table += [
        ("fmt an integer", obj(fmt=1)), ("fmt a byte string", obj(fmt=b"apple-appattest")),
        ("attStmt an array", obj(attStmt=[])), ("attStmt missing", obj(attStmt=...)),
        ("authData text", obj(authData="x" * 40)), ("authData missing", obj(authData=...)),
        ("x5c a byte string", obj(attStmt={"x5c": leaf_der, "receipt": b"r"})),
        ("x5c empty", obj(attStmt={"x5c": [], "receipt": b"r"})),
        ("x5c the leaf alone", obj(attStmt={"x5c": [leaf_der], "receipt": b"r"})),
        ("x5c of text", obj(attStmt={"x5c": ["a", "b"], "receipt": b"r"})),
        ("x5c of garbage bytes", obj(attStmt={"x5c": [b"\x30\x03\x02\x01\x01", b"garbage"], "receipt": b"r"})),
        ("receipt text", obj(attStmt={"x5c": [leaf_der, ca.intermediate_der], "receipt": "r"})),
        ("receipt missing", obj(attStmt={"x5c": [leaf_der, ca.intermediate_der]})),
        ("an extra member", cbor2.dumps({"fmt": "apple-appattest", "attStmt": {"x5c": [leaf_der, ca.intermediate_der],
                                                                              "receipt": b"r"},
                                         "authData": data, "extra": 1})),
        ("a top-level array", cbor2.dumps(["apple-appattest", {}, data])), ("a top-level text", cbor2.dumps("x")),
        ("a top-level integer", cbor2.dumps(7)), ("a top-level null", cbor2.dumps(None)),
        ("a tagged map", cbor2.dumps(cbor2.CBORTag(55799, cbor2.loads(base)))),
        ("integer keys", cbor2.dumps({1: "apple-appattest", 2: {}, 3: data})),
        ("a duplicated key", head(5, 3) + cbor2.dumps("fmt") + cbor2.dumps("apple-appattest") + cbor2.dumps("fmt")
         + cbor2.dumps("apple-appattest") + cbor2.dumps("authData") + cbor2.dumps(data)),
        ("authData of 36 bytes", obj(authData=data[:36])), ("authData of 37 bytes", obj(authData=data[:37])),
        ("authData of 54 bytes", obj(authData=data[:54])),
        ("authData with a credential ID length of 65535", obj(authData=data[:53] + b"\xff\xff" + data[55:])),
        ("authData without a COSE key", obj(authData=data[:55 + 32])),
        ("authData with a COSE key that is an array", obj(authData=data[:55 + 32] + cbor2.dumps([1, 2, 3]))),
        ("authData with a truncated COSE key", obj(authData=data[:-10])),
        ("a break code alone", b"\xff"), ("undefined", b"\xf7"), ("a reserved simple value", b"\xfc"),
        ("a NaN fmt", obj(fmt=float("nan"))),
        ("a bignum fmt", obj(fmt=2 ** 200)), ("a negative 2^64 fmt", head(1, 2 ** 64 - 1)),
        ("a byte string declaring 2^32 bytes", head(2, 2 ** 32) + b"x"),
        ("a byte string declaring 2^63 - 1 bytes", head(2, 2 ** 63 - 1)),
        ("a byte string declaring 2^64 - 1 bytes", head(2, 2 ** 64 - 1)),
        ("a text string declaring 2^64 - 1 bytes", head(3, 2 ** 64 - 1)),
        ("an array declaring 2^64 - 1 items", head(4, 2 ** 64 - 1)),
        ("a map declaring 2^64 - 1 pairs", head(5, 2 ** 64 - 1)),
        ("a map declaring 2^31 pairs", head(5, 2 ** 31) + cbor2.dumps("fmt")),
        ("arrays nested 10000 deep", b"\x81" * 10000 + b"\x00"),
        ("maps nested 5000 deep", b"\xa1\x00" * 5000 + b"\x00"),
        ("tags nested 5000 deep", b"\xd8\x37" * 5000 + b"\x00"),
        ("an indefinite-length map", b"\xbf" + base[1:] + b"\xff"),
        ("an indefinite-length byte string never ended", b"\x5f\x41\x00"),
        ("a reserved additional info (28)", b"\x1c"),
        ("100000 items in x5c", obj(attStmt={"x5c": [b""] * 100000, "receipt": b"r"})),
        ("a 1 MB receipt", obj(attStmt={"x5c": [leaf_der, ca.intermediate_der], "receipt": bytes(1 << 20)})),
    ]
    fives, not_4xx = [], []
    for name, blob in table:
        victim = Device()
        result = server.guest(victim.id, {"app_attest": {"key_id": b64(device.key_id), "attestation_object": b64(blob),
                                                         "challenge": server.challenge()}})
        if not (400 <= result[0] < 500 and envelope(result[1])):
            not_4xx.append(f"{name}: {answered(result)}")
        if result[0] >= 500:
            fives.append(name)
    check(f"{len(table)} malformed attestation objects: each a 4xx with the error envelope", not not_4xx,
          "; ".join(not_4xx[:6]))
    check("... none a 5xx", not fives, ", ".join(fives[:6]))
    sample = Device()
    refused("... one of them again (truncated) is 400 invalid_attestation",
            server.guest(sample.id, {"app_attest": {"key_id": b64(device.key_id), "attestation_object": b64(base[:40]),
                                                    "challenge": server.challenge()}}), 400, "invalid_attestation")
    not_stored(server, sample, "a malformed object")
    issued("... and the device whose key every fuzzed object carried attests afterwards",
           server.guest(device.id, {"app_attest": evidence(server, ca, device)}), attested=True)

    print("guests: a fuzzed table of malformed assertions (seeded)")
    good_challenge = server.challenge()
    valid = assertion(device, assertion_client_data_hash(b"", base64.b64decode(good_challenge)), 1)
    rows: list[tuple[str, bytes]] = []
    for length in sorted(set([0, 1, 2, 10, len(valid) - 1] + rng.sample(range(1, len(valid)), 15))):
        rows.append((f"truncated to {length} bytes", valid[:length]))
    for _ in range(30):
        flipped = bytearray(valid)
        at = rng.randrange(len(valid))
        flipped[at] ^= 1 << rng.randrange(8)
        rows.append((f"bit flip at byte {at}", bytes(flipped)))
    made = cbor2.loads(valid)
    rows += [
        ("signature text", cbor2.dumps({"signature": "x", "authenticatorData": made["authenticatorData"]})),
        ("authenticatorData an integer", cbor2.dumps({"signature": made["signature"], "authenticatorData": 1})),
        ("authenticatorData of 36 bytes", cbor2.dumps({"signature": made["signature"],
                                                       "authenticatorData": made["authenticatorData"][:36]})),
        ("signature missing", cbor2.dumps({"authenticatorData": made["authenticatorData"]})),
        ("an empty map", cbor2.dumps({})), ("an array", cbor2.dumps([made["signature"], made["authenticatorData"]])),
        ("a signature of 10000 bytes", cbor2.dumps({"signature": bytes(10000), "authenticatorData": made["authenticatorData"]})),
        ("a byte string declaring 2^64 - 1 bytes", head(2, 2 ** 64 - 1)), ("maps nested 2000 deep", b"\xa1\x00" * 2000 + b"\x00"),
        ("bytes after the map", valid + b"\x00"),
    ]
    not_4xx, fives = [], []
    for name, blob in rows:
        result = server.guest(device.id, raw=b"", headers={"X-App-Attest-Assertion": b64(blob),
                                                           "X-App-Attest-Challenge": server.challenge()})
        if not (400 <= result[0] < 500 and envelope(result[1])):
            not_4xx.append(f"{name}: {answered(result)}")
        if result[0] >= 500:
            fives.append(name)
    for name, header in (("not base64", "%%%"), ("empty", "")):
        result = server.guest(device.id, raw=b"", headers={"X-App-Attest-Assertion": header,
                                                           "X-App-Attest-Challenge": server.challenge()})
        if not (400 <= result[0] < 500 and envelope(result[1])):
            not_4xx.append(f"{name}: {answered(result)}")
    check(f"{len(rows) + 2} malformed assertions: each a 4xx with the error envelope", not not_4xx, "; ".join(not_4xx[:6]))
    check("... none a 5xx", not fives, ", ".join(fives[:6]))
    issued("... and the device's counter did not move: counter 1 still passes",
           assert_guest(server, device, 1), attested=True)


def debug_tokens_part(server: Server) -> None:
    print("guests: debug tokens (app-attest.allow-debug-tokens true)")
    made = server.cli("app-attest", "debug-token", "create", "--name", "ci")
    lines = [line.strip() for line in made.stdout.splitlines() if line.strip()]
    secret = lines[-1].split()[-1] if lines else ""
    require("`latchkey app-attest debug-token create --name ci` prints a secret", made.returncode == 0 and len(secret) >= 16,
            f"exit {made.returncode}: {made.stderr.strip()[:200]}")
    SEEN_SECRETS.add(secret)
    device = Device()
    issued("a guest request with {app_attest: {debug_token}}", server.guest(device.id, {"app_attest": {"debug_token": secret}}),
           attested=True)
    refused("... the device's next guest request without it", server.guest(device.id), 401, "invalid_assertion")
    issued("... with the debug token again", server.guest(device.id, {"app_attest": {"debug_token": secret}}), attested=True)
    result = server.register_device(Device().id, {"debug_token": secret})
    issued("register-device with the debug token", result, attested=True)
    refused("an unknown debug token", server.guest(Device().id, {"app_attest": {"debug_token": "lk_" + secrets.token_urlsafe(24)}}),
            400, "invalid_attestation")
    listed = server.cli("app-attest", "debug-token", "list")
    row = [line for line in listed.stdout.splitlines() if "\tci" in line or " ci" in line or line.endswith("ci")]
    check("`debug-token list` shows the token named ci, never its secret",
          listed.returncode == 0 and bool(row) and secret not in listed.stdout, f"exit {listed.returncode}: {listed.stdout[:200]}")
    audit = server.cli("audit", "list", "--action", "app_attest")
    check("every use is audited (app_attest.debug_token_used), without the secret",
          audit.returncode == 0 and "app_attest.debug_token_used" in audit.stdout and secret not in audit.stdout,
          f"exit {audit.returncode}: {(audit.stdout + audit.stderr)[:200]}")
    token_id = row[0].split("\t")[0].split()[0] if row else ""
    revoked = server.cli("app-attest", "debug-token", "revoke", token_id)
    check("`debug-token revoke <id>` succeeds", revoked.returncode == 0, f"exit {revoked.returncode}: {revoked.stderr[:200]}")
    refused("... then the revoked debug token", server.guest(Device().id, {"app_attest": {"debug_token": secret}}), 400,
            "invalid_attestation")


# ---------------------------------------------------------------- the other policies
def metered_part(server: Server, ca: TestCA) -> None:
    print("metered: policy guests, app-attest.unattested-guest-limit 1, debug tokens not allowed")
    plain = Device()
    result = server.guest(plain.id)
    issued("an unattested device gets a guest token (unattested-guest-limit set)", result, attested=False)
    if result[0] == 201:
        token = result[1]["access_token"]
        first = server.edit(token, plain.id)
        check("... its first edit passes, without X-Latchkey-Attested",
              first[0] == 200 and "x-latchkey-attested" not in first[2], f"{first[0]} {first[2].get('x-latchkey-attested')}")
        refused("... its second edit (metered at 1)", server.edit(token, plain.id), 429, "rate_limited")
    device = Device()
    result = server.guest(device.id, {"app_attest": evidence(server, ca, device)})
    if issued("an attested device gets a guest token", result, attested=True):
        token = result[1]["access_token"]
        edits = [server.edit(token, device.id)[0] for _ in range(METER_LIMIT)]
        check(f"... metered at the meter's own {METER_LIMIT}", edits == [200] * METER_LIMIT, str(edits))
        refused(f"... edit {METER_LIMIT + 1}", server.edit(token, device.id), 429, "rate_limited")
    victim = Device()
    refused("a failing app_attest under guests is refused, never downgraded to the unattested tier",
            server.guest(victim.id, {"app_attest": evidence(server, ca, victim, counter=1)}), 400, "invalid_attestation")
    made = server.cli("app-attest", "debug-token", "create", "--name", "not-allowed")
    lines = [line.strip() for line in made.stdout.splitlines() if line.strip()]
    secret = lines[-1].split()[-1] if made.returncode == 0 and lines else "lk_" + secrets.token_urlsafe(24)
    SEEN_SECRETS.add(secret)
    refused("a debug token while app-attest.allow-debug-tokens is false",
            server.guest(Device().id, {"app_attest": {"debug_token": secret}}), 400, "invalid_attestation")


def report_part(server: Server, ca: TestCA) -> None:
    print("report: verify and record, never refuse")
    victim = Device()
    issued("a guest request with a failing app_attest (wrong app ID) is downgraded",
           server.guest(victim.id, {"app_attest": evidence(server, ca, victim, app_id=OTHER_APP_ID)}), attested=False)
    issued("... the device stays unattested: its next guest request needs no assertion", server.guest(victim.id),
           attested=False)
    failing = Device()
    issued("register-device with a failing app_attest (expired leaf) is downgraded",
           server.register_device(failing.id, evidence(server, ca, failing, leaf_valid=(-3 * 86400, -86400))), attested=False)
    device = Device()
    issued("a good app_attest is recorded", server.guest(device.id, {"app_attest": evidence(server, ca, device)}),
           attested=True)
    refused("... and the attested device's next guest request needs an assertion", server.guest(device.id), 401,
            "invalid_assertion")
    issued("... which it sends", assert_guest(server, device, 1), attested=True)
    plain = Device()
    result = server.guest(plain.id)
    issued("an unattested fresh UUID gets a guest token", result, attested=False)
    if result[0] == 201:
        edits = [server.edit(result[1]["access_token"], plain.id)[0] for _ in range(2)]
        check("... metered at app-attest.unattested-guest-limit (2 edits pass)", edits == [200, 200], str(edits))
        refused("... its third edit", server.edit(result[1]["access_token"], plain.id), 429, "rate_limited")


def required_part(server: Server, ca: TestCA) -> None:
    print("required: register-device and guests need attestation")
    refused("register-device without app_attest", server.register_device(Device().id), 403, "attestation_required")
    refused("a guest request of an unattested device", server.guest(Device().id), 403, "attestation_required")
    victim = Device()
    refused("register-device with a failing app_attest (development AAGUID)",
            server.register_device(victim.id, evidence(server, ca, victim, aaguid=DEVELOPMENT_AAGUID)), 400,
            "invalid_attestation")
    device = Device()
    result = server.register_device(device.id, evidence(server, ca, device))
    if issued("register-device with a good app_attest", result, attested=True):
        pair = result[1]
        issued("... a refresh needs no attestation", server.call("POST", "/api/v1/auth/refresh",
                                                                 body={"refresh_token": pair["refresh_token"]}),
               attested=True, status=200)
        status, again, _ = server.call("POST", "/api/v1/auth/register-device",
                                       body={"device_id": device.id, "device_secret": pair.get("device_secret")})
        check("... the attested device signs in again without app_attest (already attested)", status in (200, 201),
              f"{status} {error_code(again)}")


def development_part(server: Server, ca: TestCA) -> None:
    print("development: app-attest.environment development (app-attest.roots naming a PEM file)")
    device = Device()
    attest_as_guest(server, ca, device, "the appattestdevelop AAGUID", aaguid=DEVELOPMENT_AAGUID)
    victim = Device()
    refused("the production AAGUID in development",
            server.guest(victim.id, {"app_attest": evidence(server, ca, victim)}), 400, "invalid_attestation")


def off_part(server: Server, ca: TestCA) -> None:
    print("off: policy off, no app IDs")
    result = server.call("POST", "/api/v1/app-attest/challenge")
    check("POST /api/v1/app-attest/challenge -> 404 naming app-attest.policy",
          result[0] == 404 and envelope(result[1]) and "app-attest.policy" in result[1]["error"]["message"],
          f"{answered(result)} {result[1] and str(result[1])[:160]}")
    device = Device()
    body = {"app_attest": {"key_id": b64(device.key_id),
                           "attestation_object": b64(attestation(ca, device, sha256(bytes(32)))),
                           "challenge": b64(secrets.token_bytes(32))}}
    issued("app_attest in a guest body is ignored (not verified, not stored)", server.guest(device.id, body), attested=False)
    issued("... the device's next guest request needs nothing", server.guest(device.id), attested=False)
    issued("register-device ignores app_attest", server.register_device(Device().id, body["app_attest"]), attested=False)


def limits_part(server: Server, ca: TestCA) -> None:
    print("limits: limits.app-attest 2 (per key ID and per client IP), limits.app-attest-challenge 3 (per client IP)")
    counter = iter(range(1, 250))

    def fresh_ip() -> str:
        return f"198.51.100.{next(counter)}"

    def attempt(device: Device, ip: str, **parts: Any) -> tuple[int, Any, dict[str, str]]:
        text = server.challenge(fresh_ip())
        return server.guest(device.id, {"app_attest": evidence(server, ca, device, challenge=text, **parts)},
                            headers={"X-Forwarded-For": ip})

    key = Device()
    first = [attempt(key, "203.0.113.1", counter=1)[0], attempt(key, "203.0.113.1", counter=1)[0]]
    check("two failing attempts with one key ID from one IP -> 400, 400", first == [400, 400], str(first))
    refused("a third with that key ID from another IP (per key ID)", attempt(key, "203.0.113.2"), 429, "rate_limited")
    refused("a third from that IP with another key ID (per client IP)", attempt(Device(), "203.0.113.1"), 429,
            "rate_limited")
    issued("another key ID from another IP is not limited (never global)", attempt(Device(), "203.0.113.3"), attested=True)
    ip = "192.0.2.7"
    answers = [server.call("POST", "/api/v1/app-attest/challenge", headers={"X-Forwarded-For": ip})[0] for _ in range(3)]
    check("three challenges from one IP -> 200", answers == [200] * 3, str(answers))
    result = server.call("POST", "/api/v1/app-attest/challenge", headers={"X-Forwarded-For": ip})
    refused("a fourth challenge from that IP", result, 429, "rate_limited")
    check("... with Retry-After", result[2].get("retry-after", "").isdigit(), str(result[2].get("retry-after")))
    status = server.call("POST", "/api/v1/app-attest/challenge", headers={"X-Forwarded-For": "192.0.2.8"})[0]
    check("a challenge from another IP -> 200", status == 200, str(status))


def startup_part(binary: str, workdir: str) -> None:
    print("startup: a policy other than off with no app IDs")
    config = base_config(workdir, "startup", {"policy": "guests"}, None)
    server = Server(binary, workdir, "startup", config)
    log = open(server.log_path, "ab")
    try:
        process = subprocess.run([binary, "serve", "--host", "127.0.0.1", "--port", str(server.port), "--config",
                                  server.config_path], stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                 env=Server.environment(), timeout=60)
        code = process.returncode
    except subprocess.TimeoutExpired:
        code = None
    finally:
        log.close()
    check("latchkey serve exits 78 naming app-attest.app-ids", code == 78 and "app-attest.app-ids" in server.log(),
          f"exit {code}: {server.tail(2).strip()[:200]}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument("--latchkey", required=True, help="the latchkey executable")
    parser.add_argument("--parts", default="objects,guests,metered,report,required,development,off,limits,startup")
    args = parser.parse_args()
    parts = set(args.parts.split(","))
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    started = time.monotonic()
    workdir = tempfile.mkdtemp(prefix="latchkey-app-attest.")
    keep = os.environ.get("LATCHKEY_TEST_KEEP_TMP") == "1"
    app_ids = [APP_ID, SECOND_APP_ID]
    try:
        print(f"interop: App Attest ({', '.join(sorted(parts))}) with cryptography and cbor2 against {args.latchkey}")
        if "objects" in parts:
            objects_part()
        ca = TestCA()
        if "guests" in parts:
            def guests(server: Server) -> None:
                for step in (guests_part, fuzz_part):
                    try:
                        step(server, ca)
                    except CheckFailed as failure:
                        stopped(failure, "this step")
                debug_tokens_part(server)

            with_server(args.latchkey, workdir, "guests", {"policy": "guests", "app-ids": app_ids,
                                                           "allow-debug-tokens": True}, ca, guests)
        runs: list[tuple[str, dict[str, Any], Callable[[Server, TestCA], None]]] = [
            ("metered", {"policy": "guests", "app-ids": app_ids, "unattested-guest-limit": 1}, metered_part),
            ("report", {"policy": "report", "app-ids": app_ids, "unattested-guest-limit": 2}, report_part),
            ("required", {"policy": "required", "app-ids": app_ids}, required_part),
            ("development", {"policy": "guests", "app-ids": app_ids, "environment": "development"}, development_part),
            ("off", {"policy": "off"}, off_part),
            ("limits", {"policy": "guests", "app-ids": app_ids}, limits_part),
        ]
        limits = {"limits": {"app-attest": {"limit": 2, "window": 3600}, "app-attest-challenge": {"limit": 3, "window": 300}}}
        for name, settings, body in runs:
            if name in parts:
                with_server(args.latchkey, workdir, name, settings, None if name == "off" else ca,
                            lambda server, body=body: body(server, ca), limits.get(name))
        if "startup" in parts:
            startup_part(args.latchkey, workdir)
    except CheckFailed as failure:
        stopped(failure, "the run")
    finally:
        for server in Server.PROCESSES:
            server.stop()
        if not RESULTS or not all(RESULTS):
            for server in Server.PROCESSES:
                print(f"---- last lines of {server.name}'s log ----\n{server.tail()}", end="")
        if keep:
            print(f"app_attest_interop: kept {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    print(f"app_attest_interop: {sum(RESULTS)} of {len(RESULTS)} checks passed in {time.monotonic() - started:.1f} s")
    return 0 if RESULTS and all(RESULTS) else 1


if __name__ == "__main__":
    sys.exit(main())
