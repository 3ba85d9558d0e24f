#!/usr/bin/env python3
"""A local SMTP server for Latchkey's tests: aiosmtpd with STARTTLS, implicit TLS, AUTH and scripted failures.

Usage: smtp_peer.py --ca-cert PATH --username USER --password PASSWORD [--host 127.0.0.1]
                    [--slow-seconds 5] [--exit-with-parent] [--verbose]

Listens on 127.0.0.1 only, every port chosen by the kernel, and prints one line once all are listening:

  ready {"host": "127.0.0.1", "ports": {"plain": p, "helo_only": p, "starttls": p, "starttls_login": p, "implicit_tls": p,
         "implicit_tls_wrong_name": p}, "http": "http://127.0.0.1:p", "ca_cert": PATH,
         "username": USER, "password": PASSWORD}

A throwaway CA is made at start (EC P-256, valid for 30 days) and written to --ca-cert; the servers' certificates
are signed by it. Nothing else is written outside a temporary directory that is removed on exit. Runs until
SIGTERM/SIGINT, or (with --exit-with-parent) until the process that started it exits.

SMTP ports (aiosmtpd, EHLO name peer.latchkey.test):
  plain                    no TLS, no AUTH: any sender, any recipient
  helo_only                like plain, but EHLO is refused (502) as by a server from before ESMTP
  starttls                 STARTTLS offered and required before MAIL; AUTH PLAIN and LOGIN (after STARTTLS
                           only), required before MAIL; the credentials are USER / PASSWORD
  starttls_login           the same, but AUTH offers LOGIN only
  implicit_tls             TLS from the first byte (certificate for localhost and 127.0.0.1); AUTH PLAIN and
                           LOGIN required
  implicit_tls_wrong_name  like implicit_tls, with a certificate for wrong-name.invalid only (same CA)

Behaviour by recipient local part (before any "+tag"), on every port:
  refuse@...    550 5.1.1 at RCPT TO
  tempfail@...  451 4.3.0 at RCPT TO
  slow@...      RCPT TO answered after --slow-seconds (default 5)
  drop@...      DATA: answers 354, reads one line of the message, then aborts the connection (nothing stored)
  anything else accepted; the message is stored
An address given a behaviour through PUT /behaviours has that one instead, whatever its local part (so one recipient
can be refused first and accepted later, as a mailbox that was full).

HTTP API (JSON):
  GET    /messages[?to=ADDR][&wait=SECONDS]  the stored messages, oldest first, optionally only those with ADDR
                                             among their recipients (case-insensitive); with wait, blocks until at
                                             least one matches or the time is up. Each message:
                                             {"id", "port", "mail_from", "rcpt_tos", "raw", "tls", "tls_version",
                                              "auth": null | {"mechanism", "username"}, "helo", "received_at"}
  DELETE /messages                           forgets all messages -> {"deleted": n}
  PUT    /behaviours?to=ADDR&behaviour=NAME  from now on mail to ADDR (the whole address, case-insensitive) behaves as
                                             NAME: refuse, tempfail, slow, drop, or accept (stored as any other)
                                             -> {"to", "behaviour"}; 400 for another NAME or no ADDR
  DELETE /behaviours                         forgets every address's behaviour -> {"deleted": n}
  GET    /health                             {"ok": true}

Needs aiosmtpd (1.4.6) and cryptography.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import ipaddress
import json
import logging
import os
import shutil
import signal
import ssl
import sys
import tempfile
import threading
import time
import urllib.parse
import warnings
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from aiosmtpd.smtp import SMTP, AuthResult
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

BEHAVIOURS = {"refuse", "tempfail", "slow", "drop"}
# Behaviours given to whole addresses (lowercased) through the HTTP API: "accept" or one of BEHAVIOURS.
OVERRIDES: dict[str, str] = {}
OVERRIDES_LOCK = threading.Lock()


def behaviour_of(address: str) -> str | None:
    with OVERRIDES_LOCK:
        override = OVERRIDES.get(address.lower())
    if override is not None:
        return override if override in BEHAVIOURS else None
    local = address.rsplit("@", 1)[0].split("+", 1)[0].lower()
    return local if local in BEHAVIOURS else None


# ---------------------------------------------------------------- certificates


def make_certificates(directory: str, ca_path: str) -> dict[str, tuple[str, str]]:
    """A CA (written to ca_path) and two server certificates; returns name -> (cert file, key file)."""
    now = datetime.datetime.now(datetime.timezone.utc)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Latchkey SMTP test CA")])
    ca_cert = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=30))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    with open(ca_path, "wb") as file:
        file.write(ca_cert.public_bytes(serialization.Encoding.PEM))

    def leaf(name: str, alternative_names: list[x509.GeneralName]) -> tuple[str, str]:
        key = ec.generate_private_key(ec.SECP256R1())
        cert = (
            x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)]))
            .issuer_name(ca_name)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=30))
            .add_extension(x509.SubjectAlternativeName(alternative_names), critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(
                x509.KeyUsage(True, False, False, False, False, False, False, False, False), critical=True
            )
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .add_extension(
                x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False
            )
            .sign(ca_key, hashes.SHA256())
        )
        cert_path = os.path.join(directory, f"{name}.crt")
        key_path = os.path.join(directory, f"{name}.key")
        with open(cert_path, "wb") as file:
            file.write(cert.public_bytes(serialization.Encoding.PEM))
        with open(key_path, "wb") as file:
            file.write(
                key.private_bytes(
                    serialization.Encoding.PEM,
                    serialization.PrivateFormat.PKCS8,
                    serialization.NoEncryption(),
                )
            )
        return cert_path, key_path

    return {
        "localhost": leaf(
            "localhost", [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
        ),
        "wrong-name": leaf("wrong-name.invalid", [x509.DNSName("wrong-name.invalid")]),
    }


def server_context(cert_and_key: tuple[str, str]) -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(*cert_and_key)
    return context


# ---------------------------------------------------------------- message store


class Store:
    def __init__(self) -> None:
        self.messages: list[dict] = []
        self.condition = threading.Condition()
        self.next_id = 1

    def add(self, message: dict) -> int:
        with self.condition:
            message["id"] = self.next_id
            self.next_id += 1
            self.messages.append(message)
            self.condition.notify_all()
            return message["id"]

    def find(self, to: str | None, wait: float) -> list[dict]:
        def matching() -> list[dict]:
            if to is None:
                return list(self.messages)
            wanted = to.lower()
            return [m for m in self.messages if wanted in (r.lower() for r in m["rcpt_tos"])]

        deadline = time.monotonic() + wait
        with self.condition:
            found = matching()
            while not found and time.monotonic() < deadline:
                self.condition.wait(deadline - time.monotonic())
                found = matching()
            return found

    def clear(self) -> int:
        with self.condition:
            count = len(self.messages)
            self.messages.clear()
            return count


# ---------------------------------------------------------------- SMTP


class PeerSMTP(SMTP):
    """aiosmtpd's server, with the drop@ behaviour: the connection dies in the middle of DATA."""

    async def smtp_DATA(self, arg: str) -> None:
        envelope = self.envelope
        if not arg and envelope is not None and any(behaviour_of(r) == "drop" for r in envelope.rcpt_tos):
            await self.push("354 End data with <CR><LF>.<CR><LF>")
            await self._reader.readuntil(b"\r\n")
            self.transport.abort()
            # The rest of the message is still buffered; it must not be read as commands (aiosmtpd does the same
            # with plaintext left over at STARTTLS).
            self._reader._buffer.clear()
            return
        await super().smtp_DATA(arg)


class HeloOnlySMTP(PeerSMTP):
    """A server from before ESMTP: EHLO is an unknown command, HELO works."""

    async def smtp_EHLO(self, hostname: str) -> None:
        await self.push("502 5.5.1 EHLO not implemented")


class Handler:
    def __init__(self, store: Store, port_name: str, slow_seconds: float) -> None:
        self.store = store
        self.port_name = port_name
        self.slow_seconds = slow_seconds

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        behaviour = behaviour_of(address)
        if behaviour == "refuse":
            return "550 5.1.1 Mailbox refused by the test peer"
        if behaviour == "tempfail":
            return "451 4.3.0 Temporary failure at the test peer"
        if behaviour == "slow":
            await asyncio.sleep(self.slow_seconds)
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        ssl_object = server.transport.get_extra_info("ssl_object") if server.transport else None
        auth = session.auth_data if session.authenticated else None
        message_id = self.store.add(
            {
                "port": self.port_name,
                "mail_from": envelope.mail_from,
                "rcpt_tos": list(envelope.rcpt_tos),
                "raw": envelope.original_content.decode("utf-8", errors="replace"),
                "tls": ssl_object is not None,
                "tls_version": ssl_object.version() if ssl_object is not None else None,
                "auth": auth,
                "helo": session.host_name,
                "received_at": time.time(),
            }
        )
        return f"250 OK queued as {message_id}"


def make_authenticator(username: str, password: str):
    def authenticate(server, session, envelope, mechanism, auth_data) -> AuthResult:
        login = auth_data.login.decode("utf-8", errors="replace")
        if login == username and auth_data.password.decode("utf-8", errors="replace") == password:
            return AuthResult(success=True, auth_data={"mechanism": mechanism, "username": login})
        return AuthResult(success=False, handled=False)

    return authenticate


# ---------------------------------------------------------------- HTTP API


def make_http_handler(store: Store):
    class HTTPHandler(BaseHTTPRequestHandler):
        def log_message(self, format, *args):  # noqa: A002 - the base class's name
            pass

        def reply(self, status: int, body) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            url = urllib.parse.urlsplit(self.path)
            query = urllib.parse.parse_qs(url.query)
            if url.path == "/health":
                return self.reply(200, {"ok": True})
            if url.path == "/messages":
                try:
                    wait = min(float(query.get("wait", ["0"])[0]), 60.0)
                except ValueError:
                    return self.reply(400, {"error": "wait must be a number of seconds"})
                return self.reply(200, store.find(query.get("to", [None])[0], wait))
            return self.reply(404, {"error": "not found"})

        def do_PUT(self):
            url = urllib.parse.urlsplit(self.path)
            if url.path != "/behaviours":
                return self.reply(404, {"error": "not found"})
            query = urllib.parse.parse_qs(url.query)
            to, behaviour = query.get("to", [""])[0].strip().lower(), query.get("behaviour", [""])[0]
            if not to or behaviour not in BEHAVIOURS | {"accept"}:
                return self.reply(400, {"error": f"to=ADDR and behaviour=one of {sorted(BEHAVIOURS | {'accept'})}"})
            with OVERRIDES_LOCK:
                OVERRIDES[to] = behaviour
            return self.reply(200, {"to": to, "behaviour": behaviour})

        def do_DELETE(self):
            path = urllib.parse.urlsplit(self.path).path
            if path == "/messages":
                return self.reply(200, {"deleted": store.clear()})
            if path == "/behaviours":
                with OVERRIDES_LOCK:
                    count = len(OVERRIDES)
                    OVERRIDES.clear()
                return self.reply(200, {"deleted": count})
            return self.reply(404, {"error": "not found"})

    return HTTPHandler


# ---------------------------------------------------------------- main


async def serve(arguments: argparse.Namespace) -> None:
    loop = asyncio.get_running_loop()
    store = Store()
    directory = tempfile.mkdtemp(prefix="latchkey-smtp-peer-")
    try:
        certificates = make_certificates(directory, arguments.ca_cert)
        authenticator = make_authenticator(arguments.username, arguments.password)
        good_tls = server_context(certificates["localhost"])

        def factory(name: str, server_class: type[SMTP] = PeerSMTP, **options):
            common = {"hostname": "peer.latchkey.test", "ident": "Latchkey test peer", "timeout": 60}
            return lambda: server_class(Handler(store, name, arguments.slow_seconds), **common, **options)

        authenticated = {"auth_required": True, "authenticator": authenticator}
        starttls = {"tls_context": good_tls, "require_starttls": True, **authenticated}
        # On an implicit-TLS port the transport is TLS already; aiosmtpd only knows STARTTLS, hence
        # auth_require_tls=False.
        implicit = {"auth_require_tls": False, **authenticated}
        servers = {
            "plain": (factory("plain"), None),
            "helo_only": (factory("helo_only", HeloOnlySMTP), None),
            "starttls": (factory("starttls", **starttls), None),
            "starttls_login": (factory("starttls_login", auth_exclude_mechanism=["PLAIN"], **starttls), None),
            "implicit_tls": (factory("implicit_tls", **implicit), good_tls),
            "implicit_tls_wrong_name": (
                factory("implicit_tls_wrong_name", **implicit),
                server_context(certificates["wrong-name"]),
            ),
        }
        ports = {}
        running = []
        for name, (protocol_factory, tls) in servers.items():
            server = await loop.create_server(protocol_factory, arguments.host, 0, ssl=tls)
            running.append(server)
            ports[name] = server.sockets[0].getsockname()[1]

        http_server = ThreadingHTTPServer((arguments.host, 0), make_http_handler(store))
        http_server.daemon_threads = True
        threading.Thread(target=http_server.serve_forever, daemon=True).start()

        ready = {
            "host": arguments.host,
            "ports": ports,
            "http": f"http://{arguments.host}:{http_server.server_address[1]}",
            "ca_cert": os.path.abspath(arguments.ca_cert),
            "username": arguments.username,
            "password": arguments.password,
        }
        print("ready " + json.dumps(ready), flush=True)

        stop = asyncio.Event()
        for signal_number in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signal_number, stop.set)
        if arguments.exit_with_parent:
            parent = os.getppid()

            async def watch_parent() -> None:
                while os.getppid() == parent:
                    await asyncio.sleep(0.5)
                stop.set()

            loop.create_task(watch_parent())
        await stop.wait()
        http_server.shutdown()
        for server in running:
            server.close()
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--ca-cert", required=True, help="where to write the CA certificate (PEM)")
    parser.add_argument("--username", required=True)
    parser.add_argument("--password", required=True)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--slow-seconds", type=float, default=5.0)
    parser.add_argument("--exit-with-parent", action="store_true")
    parser.add_argument("--verbose", action="store_true", help="log every SMTP exchange to stderr")
    arguments = parser.parse_args()
    logging.basicConfig(level=logging.DEBUG if arguments.verbose else logging.WARNING, stream=sys.stderr)
    # aiosmtpd warns that AUTH without STARTTLS is unsafe; on the implicit-TLS ports it is not.
    warnings.filterwarnings("ignore", message="Requiring AUTH while not requiring TLS")
    warnings.filterwarnings("ignore", message="Session.login_data is deprecated")
    asyncio.run(serve(arguments))


if __name__ == "__main__":
    sys.exit(main())
