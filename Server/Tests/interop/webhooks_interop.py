#!/usr/bin/env python3
"""Interop test: signed webhooks, the backend API and the claims hook (issue 35) against live `latchkey serve` processes.

Usage: webhooks_interop.py --latchkey BIN [--postgres-url URL] [--parts webhooks,backend] [--psql PATH]

The SMTP peer (Server/Tests/interop/smtp_peer.py) is found through LATCHKEY_TEST_SMTP_PEER (its ready JSON, as
scripts/test sets it); without it this script starts one of its own. Everything else it starts itself, on 127.0.0.1:

- a webhook receiver (http.server, threaded) that checks every delivery with PyPI's `standardwebhooks`
  (`Webhook(secret).verify(body, headers)`: the Standard Webhooks reference implementation, not ours), each endpoint with
  its own secret on its own path; it can be taken down (its socket closed), answer 500, or answer slowly;
- a claims hook peer that checks each call the same way and answers per user: claims, slowly, a reserved claim (`sub`…),
  an oversized answer, or a 500;
- `latchkey serve` processes with a config file of their own (a short `webhooks.retry-schedule` of 1 s steps, so the
  retries take real seconds, each bounded by polling with a deadline; never a fixed sleep): on SQLite, and two on one
  PostgreSQL schema (made in the cluster of --postgres-url with psql, dropped at the end).

Parts (--parts; default both; a binary that knows only one half refuses the other's settings):
  webhooks  register a device -> user.created + session.created; attach an email and verify it with the mailed code ->
            user.updated (email_verified, once); logout -> session.revoked reason logout; delete -> user.deleted; the
            receiver down while changes happen -> the server retries and every event arrives once it is back; the
            receiver answering 500, then `kill -9` of the server, a restart -> the event delivered with the same
            webhook-id and the same body, signed afresh; two processes on PostgreSQL -> each event to each endpoint
            exactly once (an endpoint's `events` filter honoured), every outbox row delivered after one attempt.
  backend   the backend API with the service key (a wrong or missing key 401, nothing changed; an oversized
            app_metadata 400 invalid_request, nothing stored; an unknown user 404), app_metadata in the next token,
            disable -> the old access token 401, refresh and register-device 403 user_disabled, enable -> signs in
            again; revoke-sessions (the access token 401), DELETE (then 404); the claims hook (signed the Standard
            Webhooks way, its payload's fields) adding a claim, a slow hook (hooks.claims.timeout 1 s, on-failure
            omit) still issuing tokens in time, a hook setting `sub`, `iss`, `aal` ignored for those, an oversized
            answer and a failing hook -> tokens without the hook's claims. With both parts: user.disabled,
            session.revoked reason disabled, user.updated (app_metadata, enabled), user.deleted.
Across the run: every delivery verified, no (endpoint, webhook-id) answered 2xx twice, every `data` has `user_id`
and holds none of the tokens, secrets, password or codes the run saw.

Needs the standard library and standardwebhooks (installed by scripts/test into a throwaway venv; aiosmtpd and
cryptography too when it starts its own SMTP peer). Exits 0 when every check passes, 1 otherwise. Never prints a
token or a secret. Every process it starts and every temp dir it makes is removed on exit, failed or not.
"""

from __future__ import annotations

import argparse
import base64
import email
import glob
import email.policy
import http.server
import json
import os
import re
import secrets
import shutil
import signal
import socket
import sqlite3
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

from interop_checks import RESULTS, CheckFailed, check, free_port, poll, require, serve, stop, stopped
from standardwebhooks import Webhook
from standardwebhooks.webhooks import WebhookVerificationError

TIMEOUT = 10  # seconds per HTTP request to a server
PASSWORD = "correct horse battery staple"
HOOK_TIMEOUT = 1  # hooks.claims.timeout, seconds
RETRY_SCHEDULE = [1] * 20  # webhooks.retry-schedule: 20 retries a second apart, so nothing fails for good in a run
SEEN_SECRETS: set[str] = set()  # every token and secret of the run: none may be in a webhook body
SEEN_CODES: set[str] = set()  # the mailed codes: none may be a value in a webhook's data



def whsec() -> str:
    return "whsec_" + base64.b64encode(secrets.token_bytes(32)).decode()


def claims_of(token: str) -> dict[str, Any]:
    payload = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


# ---------------------------------------------------------------- HTTP client
def call(method: str, url: str, body: Any = None, bearer: str | None = None, raw: bytes | None = None) -> tuple[int, Any]:
    """(status, parsed JSON or None). Never raises on an HTTP status."""
    headers = {"Accept": "application/json"}
    data = raw
    if body is not None:
        data = json.dumps(body).encode()
    if data is not None:
        headers["Content-Type"] = "application/json"
    if bearer is not None:
        headers["Authorization"] = f"Bearer {bearer}"
    request = urllib.request.Request(url, method=method, headers=headers, data=data)
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
            status, text = response.status, response.read()
    except urllib.error.HTTPError as error:
        status, text = error.code, error.read()
    except (urllib.error.URLError, OSError) as error:
        raise CheckFailed(f"{method} {urllib.parse.urlsplit(url).path}: cannot connect: {error}") from error
    try:
        return status, json.loads(text) if text else None
    except ValueError:
        return status, None


def error_code(answer: Any) -> str | None:
    return answer.get("error", {}).get("code") if isinstance(answer, dict) else None


def remember(pair: Any) -> Any:
    if isinstance(pair, dict):
        for key in ("access_token", "refresh_token", "device_secret"):
            if isinstance(pair.get(key), str) and len(pair[key]) >= 8:
                SEEN_SECRETS.add(pair[key])
    return pair


# ---------------------------------------------------------------- the webhook receiver
class Receiver:
    """Standard Webhooks endpoints on one port: path -> secret. Records every request, verified or not."""

    def __init__(self) -> None:
        self.port = free_port()
        self.secrets: dict[str, str] = {}
        self.mode = "ok"  # ok | fail (500) | slow (answers after `delay`)
        self.delay = 0.0
        self.requests: list[dict[str, Any]] = []
        self.changed = threading.Condition()
        self.server: http.server.ThreadingHTTPServer | None = None
        self.thread: threading.Thread | None = None

    def endpoint(self, path: str) -> tuple[str, str]:
        secret = whsec()
        self.secrets[path] = secret
        SEEN_SECRETS.add(secret)
        return f"http://127.0.0.1:{self.port}{path}", secret

    def start(self) -> None:
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                headers = {k.lower(): v for k, v in self.headers.items()}
                record: dict[str, Any] = {"path": self.path, "id": headers.get("webhook-id"), "body": body,
                                          "timestamp": headers.get("webhook-timestamp"), "at": time.time(),
                                          "verified": False, "event": None}
                secret = receiver.secrets.get(self.path)
                try:
                    if secret is None:
                        raise WebhookVerificationError(f"no endpoint at {self.path}")
                    record["event"] = Webhook(secret).verify(body, headers)
                    record["verified"] = True
                    status = 500 if receiver.mode == "fail" else 200
                except (WebhookVerificationError, ValueError) as error:
                    record["error"] = str(error)
                    status = 400
                if receiver.mode == "slow" and status == 200:
                    time.sleep(receiver.delay)
                record["status"] = status
                with receiver.changed:
                    receiver.requests.append(record)
                    receiver.changed.notify_all()
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        """Down: the listening socket closed, so the server's attempts are refused connections."""
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
            self.server = None

    def delivered(self, path: str | None = None) -> list[dict[str, Any]]:
        """Verified requests answered 200 (at `path`)."""
        with self.changed:
            return [r for r in self.requests if r["status"] == 200 and (path is None or r["path"] == path)]

    def find(self, path: str, type_: str, user_id: str, status: int = 200, **data: str) -> list[dict[str, Any]]:
        with self.changed:
            found = []
            for r in self.requests:
                event = r["event"] or {}
                d = event.get("data") or {}
                if r["path"] == path and r["status"] == status and event.get("type") == type_ \
                        and d.get("user_id") == user_id and all(d.get(k) == v for k, v in data.items()):
                    found.append(r)
            return found

    def wait(self, path: str, type_: str, user_id: str, seconds: float = 10, status: int = 200, **data: str) -> dict | None:
        found = poll(lambda: self.find(path, type_, user_id, status, **data), seconds)
        return found[0] if found else None


# ---------------------------------------------------------------- the claims hook peer
class ClaimsHook:
    """hooks.claims.url: checks the Standard Webhooks signature, records the payload, answers by the user's mode."""

    def __init__(self) -> None:
        self.port = free_port()
        self.secret = whsec()
        SEEN_SECRETS.add(self.secret)
        self.modes: dict[str, str] = {}  # user_id -> default | slow | reserved | big | fail
        self.calls: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        hook = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                headers = {k.lower(): v for k, v in self.headers.items()}
                try:
                    payload = Webhook(hook.secret).verify(body, headers)
                except (WebhookVerificationError, ValueError) as error:
                    with hook.lock:
                        hook.calls.append({"verified": False, "error": str(error), "payload": None})
                    self.answer(401, {"error": "bad signature"})
                    return
                user = payload.get("user_id") if isinstance(payload, dict) else None
                mode = hook.modes.get(user, "default")
                with hook.lock:
                    hook.calls.append({"verified": True, "payload": payload, "mode": mode, "at": time.time()})
                if mode == "slow":
                    time.sleep(HOOK_TIMEOUT + 4)
                    self.answer(200, {"claims": {"plan": "slow"}})
                elif mode == "reserved":
                    self.answer(200, {"claims": {"sub": "attacker", "iss": "https://evil.example", "aal": "aal3",
                                                 "exp": 4102444800, "amr": ["hwk"], "plan": "red"}})
                elif mode == "big":
                    self.answer(200, {"claims": {"plan": "big", "blob": "x" * 4096}})
                elif mode == "fail":
                    self.answer(500, {"error": "down"})
                else:
                    self.answer(200, {"claims": {"plan": "gold", "seats": 3}})

            def answer(self, status: int, body: Any) -> None:
                data = json.dumps(body).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:
                    pass  # the server gave up waiting (the slow mode)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/claims"

    def calls_for(self, user_id: str) -> list[dict[str, Any]]:
        with self.lock:
            return [c for c in self.calls if c["verified"] and c["payload"].get("user_id") == user_id]

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


# ---------------------------------------------------------------- latchkey serve
class Server:
    PROCESSES: list["Server"] = []

    def __init__(self, binary: str, workdir: str, name: str, database: str, config: dict[str, Any]) -> None:
        self.binary, self.name, self.database = binary, name, database
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.config_path = os.path.join(workdir, f"{name}.json")
        self.log_path = os.path.join(workdir, f"{name}.log")
        fd = os.open(self.config_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            json.dump(config, f)
        self.process: subprocess.Popen | None = None
        Server.PROCESSES.append(self)

    def start(self, seconds: float = 60) -> None:
        self.process = serve(
            self.binary, self.port, self.base, self.config_path, self.log_path, {k: v for k, v in os.environ.items() if not k.startswith("LATCHKEY_")}, self.name, self.tail, seconds)

    def kill9(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(10)

    def stop(self) -> None:
        stop(self.process)

    def tail(self, lines: int = 15) -> str:
        try:
            with open(self.log_path, errors="replace") as f:
                return "".join(f.readlines()[-lines:])
        except OSError:
            return ""

    def url(self, path: str) -> str:
        return self.base + path

    # The API as an app uses it.
    def register_device(self, device_id: str, device_secret: str | None = None) -> tuple[int, Any]:
        body = {"device_id": device_id, **({"device_secret": device_secret} if device_secret else {})}
        status, answer = call("POST", self.url("/api/v1/auth/register-device"), body)
        return status, remember(answer)

    def refresh(self, refresh_token: str) -> tuple[int, Any]:
        status, answer = call("POST", self.url("/api/v1/auth/refresh"), {"refresh_token": refresh_token})
        return status, remember(answer)


def base_config(workdir: str, smtp: dict[str, Any] | None) -> dict[str, Any]:
    config: dict[str, Any] = {
        "master-key-file": os.path.join(workdir, "master.key"),
        "limits": {name: {"limit": 0} for name in ("register-device", "refresh", "sign-in", "register-user")},
    }
    if smtp is not None:
        config["smtp"] = {"host": "127.0.0.1", "port": smtp["ports"]["plain"], "tls": "none"}
        config["email"] = {"from": "no-reply@latchkey.test"}
    return config


def webhooks_config(endpoints: list[dict[str, Any]]) -> dict[str, Any]:
    return {"endpoints": endpoints, "retry-schedule": RETRY_SCHEDULE, "timeout": 2}


# ---------------------------------------------------------------- the outbox as stored (migration 16's tables)
class Outbox:
    """Reads webhook_deliveries joined with webhook_events, on SQLite (the file) or PostgreSQL (psql)."""

    def __init__(self, sqlite_path: str | None = None, psql: list[str] | None = None, schema: str | None = None) -> None:
        self.sqlite_path, self.psql = sqlite_path, psql
        self.prefix = f"{schema}." if schema else ""

    def rows(self, users: list[str]) -> list[tuple[str, str, str, str, int, str, str]]:
        """(event id, type, endpoint, status, attempts, the last answer's status or error ("" before one is recorded),
        the lease ("" when none)) of the users' events, one row per endpoint."""
        quoted = ", ".join("'" + u.replace("'", "''") + "'" for u in users)
        query = (f"SELECT e.id, e.type, d.endpoint, d.status, d.attempts, "
                 "COALESCE(CAST(d.last_status AS TEXT), d.last_error, ''), COALESCE(CAST(d.claimed_until AS TEXT), '') "
                 f"FROM {self.prefix}webhook_deliveries d "
                 f"JOIN {self.prefix}webhook_events e ON e.id = d.event_id WHERE e.user_id IN ({quoted}) "
                 "ORDER BY e.id, d.endpoint")
        try:
            if self.sqlite_path:
                db = sqlite3.connect(f"file:{self.sqlite_path}?mode=ro", uri=True, timeout=5)
                try:
                    return [(a, b, c, d, int(e), str(f), str(g)) for a, b, c, d, e, f, g in db.execute(query).fetchall()]
                finally:
                    db.close()
            out = subprocess.run([*self.psql, "-At", "-F", "\t", "-c", query], capture_output=True, text=True, timeout=20)
            if out.returncode != 0:
                return []
            return [(a, b, c, d, int(e), f, g) for a, b, c, d, e, f, g in (line.split("\t") for line in out.stdout.splitlines() if line)]
        except (sqlite3.Error, OSError, ValueError, subprocess.TimeoutExpired):
            return []


# ---------------------------------------------------------------- the SMTP peer
def mailed_code(peer_http: str, address: str) -> str:
    query = urllib.parse.urlencode({"to": address, "wait": "20"})
    with urllib.request.urlopen(f"{peer_http}/messages?{query}", timeout=30) as response:
        messages = json.loads(response.read())
    if not messages:
        raise CheckFailed("no verification mail reached the SMTP peer")
    message = email.message_from_string(messages[0]["raw"], policy=email.policy.default)
    part = message.get_body(preferencelist=("plain",))
    for line in (part.get_content() if part is not None else "").splitlines():
        if re.fullmatch(r"\d{6}", line.strip()):
            SEEN_CODES.add(line.strip())
            return line.strip()
    raise CheckFailed("the verification mail has no six-digit code on a line of its own")


# ---------------------------------------------------------------- part: webhooks
def lifecycle(server: Server, receiver: Receiver, path: str, smtp_http: str | None) -> None:
    """The changes first, then their events (delivered meanwhile, so the run waits for the deliverer once)."""
    print("webhooks: a device user's life, one event per change")
    device = str(uuid.uuid4())
    status, first = server.register_device(device)
    require("register-device answers 201", status == 201, f"{status} {error_code(first)}")
    user, session = first["user_id"], first.get("session_id") or ""
    if smtp_http:
        address = f"wh-{uuid.uuid4().hex[:12]}@example.test"
        status, answer = call("POST", server.url("/api/v1/auth/register"), {"email": address, "password": PASSWORD},
                              bearer=first["access_token"])
        require("attaching an email and password to the device user answers 201", status == 201,
                f"{status} {error_code(answer)}")
        status, answer = call("POST", server.url("/api/v1/auth/verify-email"),
                              {"email": address, "code": mailed_code(smtp_http, address)})
        require("verify-email with the mailed code answers 200", status == 200, f"{status} {error_code(answer)}")
    else:
        check("an SMTP peer for the email step", False, "no LATCHKEY_TEST_SMTP_PEER and none started")
    status, answer = call("POST", server.url("/api/v1/auth/logout"), {"scope": "local"}, bearer=first["access_token"])
    require("logout answers 200", status == 200, f"{status} {error_code(answer)}")
    status, again = server.register_device(device, first.get("device_secret"))
    require("the device signs in again (register-device with its secret)", status in (200, 201), f"{status} {error_code(again)}")
    status, answer = call("DELETE", server.url("/api/v1/users/me"), bearer=again["access_token"])
    require("DELETE /api/v1/users/me answers 200/204", status in (200, 204), f"{status} {error_code(answer)}")

    created = receiver.wait(path, "user.created", user)
    check("register a device -> user.created, verified by standardwebhooks", created is not None)
    if created:
        check("user.created's data has the user's kind", isinstance(created["event"]["data"].get("kind"), str),
              str(created["event"]["data"]))
        check("the body is {type, timestamp, data}", set(created["event"]) == {"type", "timestamp", "data"},
              str(sorted(created["event"])))
    check("... and session.created with the session's ID", receiver.wait(path, "session.created", user, session_id=session) is not None)
    if smtp_http:
        verified = receiver.wait(path, "user.updated", user, change="email_verified")
        check("attach an email and verify it -> user.updated (change email_verified)", verified is not None)
    revoked = receiver.wait(path, "session.revoked", user, session_id=session)
    check("logout -> session.revoked with reason logout", revoked is not None and revoked["event"]["data"].get("reason") == "logout",
          str(revoked and revoked["event"]["data"]))
    check("the sign-in again -> session.created",
          receiver.wait(path, "session.created", user, session_id=again.get("session_id") or "") is not None)
    check("delete -> user.deleted", receiver.wait(path, "user.deleted", user) is not None)
    ended = receiver.wait(path, "session.revoked", user, session_id=again.get("session_id") or "", reason="deleted")
    check("... and its open session's session.revoked with reason deleted", ended is not None)
    if smtp_http:
        # By now every event of the user is in. verify-email is one change: one user.updated for it.
        changes = [r["event"]["data"].get("change") for r in receiver.find(path, "user.updated", user)]
        check("user.updated names each change from the documented set",
              bool(changes) and set(changes) <= {"email_verified", "email_set", "password_set"}, str(changes))
        check("email_verified told once (user.updated once per committed change)", changes.count("email_verified") == 1,
              str(changes))


def receiver_down(server: Server, receiver: Receiver, path: str, outbox: Outbox) -> None:
    print("webhooks: the receiver down for a while")
    receiver.stop()
    device = str(uuid.uuid4())
    status, pair = server.register_device(device)
    require("register-device while the receiver is down answers 201", status == 201, f"{status}")
    user = pair["user_id"]
    status, _ = call("POST", server.url("/api/v1/auth/logout"), {"scope": "local"}, bearer=pair["access_token"])
    require("logout while the receiver is down answers 200", status == 200, f"{status}")
    # Three events pending; the first attempt fails (a refused connection, each attempt up to webhooks.timeout, one
    # endpoint's attempts in order): once one failure is recorded the receiver returns, and that event comes by a retry.
    tried = poll(lambda: (lambda rows: len(rows) == 3 and all(r[3] == "pending" for r in rows) and any(r[5] for r in rows))(
        outbox.rows([user])), 10)
    check("while it is down the 3 deliveries stay pending, an attempt failed", tried, str([r[1:] for r in outbox.rows([user])]))
    receiver.start()
    types = ["user.created", "session.created", "session.revoked"]
    arrived = poll(lambda: all(receiver.find(path, t, user) for t in types), 10)
    check("once it is back every event arrives (user.created, session.created, session.revoked)", arrived,
          str([(t, len(receiver.find(path, t, user))) for t in types]))
    done = poll(lambda: (lambda rows: len(rows) == 3 and all(r[3] == "delivered" for r in rows))(outbox.rows([user])), 5)
    rows = outbox.rows([user])
    check("the outbox marks the three delivered, the failed one after a retry", done and any(r[4] >= 2 for r in rows),
          str([r[1:5] for r in rows]))


def kill_nine(server: Server, receiver: Receiver, path: str, outbox: Outbox) -> Server:
    print("webhooks: kill -9 between the change and its delivery")
    receiver.mode = "fail"
    device = str(uuid.uuid4())
    status, pair = server.register_device(device)
    require("register-device answers 201 (the receiver answering 500)", status == 201, f"{status}")
    user = pair["user_id"]
    failed = receiver.wait(path, "user.created", user, status=500)
    require("the first attempt reached the receiver (answered 500: the event is pending)", failed is not None)
    # Killed once both deliveries (user.created, session.created) failed and none is leased: the retries are due a
    # second later. (A delivery claimed when the process dies stays leased for webhooks.timeout + 60 s, by design.)
    recorded = poll(lambda: (lambda rows: len(rows) == 2 and all(r[3] == "pending" and r[5] and not r[6] for r in rows))(
        outbox.rows([user])), 5, 0.02)
    require("the outbox records both failed attempts, the deliveries pending, none leased", recorded,
            str([r[1:] for r in outbox.rows([user])]))
    server.kill9()
    check("the server is gone (SIGKILL)", server.process.returncode == -signal.SIGKILL, str(server.process.returncode))
    receiver.mode = "ok"
    server.start()
    delivered = receiver.wait(path, "user.created", user, seconds=20)
    check("after a restart the event is delivered", delivered is not None)
    if delivered and failed:
        check("... with the same webhook-id as the attempt before the kill", delivered["id"] == failed["id"])
        check("... the same body bytes", delivered["body"] == failed["body"])
        check("... and a signature made afresh (webhook-timestamp of the new attempt, later)",
              int(delivered["timestamp"]) > int(failed["timestamp"]), f"{failed['timestamp']} -> {delivered['timestamp']}")
    check("its session.created is delivered too", receiver.wait(path, "session.created", user, seconds=10) is not None)
    done = poll(lambda: (lambda rows: len(rows) == 2 and all(r[3] == "delivered" for r in rows))(outbox.rows([user])), 5)
    check("the outbox marks both delivered", done, str([r[1:5] for r in outbox.rows([user])]))
    return server


def two_processes(binary: str, workdir: str, smtp: dict | None, receiver: Receiver, postgres_url: str, psql: list[str]) -> None:
    print("webhooks: two processes on one PostgreSQL database")
    schema = "wh_" + uuid.uuid4().hex[:16]
    made = subprocess.run([*psql, "-c", f"CREATE SCHEMA {schema}"], capture_output=True, text=True, timeout=30)
    require("a fresh schema in the PostgreSQL cluster (psql)", made.returncode == 0, made.stderr.strip()[:200])
    try:
        url = postgres_url + ("&" if "?" in postgres_url else "?") + "search_path=" + schema
        all_url, _ = receiver.endpoint("/pg-all")
        created_url, _ = receiver.endpoint("/pg-created")
        config = base_config(workdir, smtp)
        config["database"] = url
        config["webhooks"] = webhooks_config([
            {"name": "all", "url": all_url, "secret": receiver.secrets["/pg-all"], "events": ["*"]},
            {"name": "created", "url": created_url, "secret": receiver.secrets["/pg-created"], "events": ["user.created"]},
        ])
        first = Server(binary, workdir, "pg-1", url, config)
        second = Server(binary, workdir, "pg-2", url, config)
        first.start()
        second.start()  # after the first made the master key file
        receiver.mode, receiver.delay = "slow", 0.2  # in flight longer: the other process must not take it meanwhile
        users = []
        for i in range(6):
            status, pair = (first, second)[i % 2].register_device(str(uuid.uuid4()))
            require(f"register-device on process {i % 2 + 1} answers 201", status == 201, f"{status}")
            users.append(pair["user_id"])
        psql_outbox = Outbox(psql=psql, schema=schema)

        def all_arrived() -> bool:
            return all(receiver.find("/pg-all", t, u) for t in ("user.created", "session.created") for u in users) \
                and all(receiver.find("/pg-created", "user.created", u) for u in users)

        check("12 events to endpoint all and 6 to endpoint created arrive", poll(all_arrived, 20))
        settled = poll(lambda: (lambda rows: len(rows) == 18 and all(r[3] == "delivered" for r in rows))(
            psql_outbox.rows(users)), 10)
        rows = psql_outbox.rows(users)
        check("the outbox holds 18 deliveries, each delivered", settled, f"{len(rows)} rows")
        check("... each after one attempt (no process took another's lease)", bool(rows) and all(r[4] == 1 for r in rows),
              str([r for r in rows if r[4] != 1][:3]))
        time.sleep(0.5)  # a duplicate would be an extra request after the rows say delivered: give it a moment
        for path, count in (("/pg-all", 12), ("/pg-created", 6)):
            got = [r["id"] for r in receiver.delivered(path) if (r["event"]["data"].get("user_id") in users)]
            check(f"endpoint {path[4:]}: {count} deliveries, each webhook-id once", len(got) == count and len(set(got)) == count,
                  f"{len(got)} deliveries, {len(set(got))} ids")
        check("endpoint created (events [\"user.created\"]) got nothing else",
              all(r["event"]["type"] == "user.created" for r in receiver.delivered("/pg-created")))
        ids_all = {r["id"] for r in receiver.delivered("/pg-all") if r["event"]["type"] == "user.created"}
        ids_created = {r["id"] for r in receiver.delivered("/pg-created")}
        check("the webhook-id of an event is the same at both endpoints", ids_created <= ids_all and bool(ids_created))
        receiver.mode = "ok"
        first.stop()
        second.stop()
    finally:
        receiver.mode = "ok"
        subprocess.run([*psql, "-c", f"DROP SCHEMA IF EXISTS {schema} CASCADE"], capture_output=True, timeout=30)


def webhooks_part(binary: str, workdir: str, smtp: dict | None, receiver: Receiver, postgres_url: str | None,
                  psql: list[str] | None) -> None:
    url, secret = receiver.endpoint("/sqlite")
    config = base_config(workdir, smtp)
    database = os.path.join(workdir, "webhooks.sqlite")
    config["database"] = database
    config["webhooks"] = webhooks_config([{"name": "receiver", "url": url, "secret": secret, "events": ["*"]}])
    server = Server(binary, workdir, "webhooks", database, config)
    server.start()
    outbox = Outbox(sqlite_path=database)
    for step in (lambda: lifecycle(server, receiver, "/sqlite", smtp and smtp.get("http")),
                 lambda: receiver_down(server, receiver, "/sqlite", outbox),
                 lambda: kill_nine(server, receiver, "/sqlite", outbox)):
        try:
            step()
        except CheckFailed as failure:
            stopped(failure, "this step")
            receiver.mode = "ok"
            if receiver.server is None:
                receiver.start()
            if server.process.poll() is not None:
                server.start()
    server.stop()
    if postgres_url and psql:
        try:
            two_processes(binary, workdir, smtp, receiver, postgres_url, psql)
        except CheckFailed as failure:
            stopped(failure, "the PostgreSQL step")
    else:
        check("two processes on PostgreSQL: a cluster to run on (--postgres-url)", False, "not given")


# ---------------------------------------------------------------- part: backend
def backend_part(binary: str, workdir: str, smtp: dict | None, receiver: Receiver | None) -> None:
    print("backend: the backend API with the service key, app_metadata and the claims hook")
    hook = ClaimsHook()
    key = "sk_" + secrets.token_urlsafe(32)
    SEEN_SECRETS.add(key)
    config = base_config(workdir, None)
    database = os.path.join(workdir, "backend.sqlite")
    config["database"] = database
    config["backend"] = {"service-key": key}
    config["hooks"] = {"claims": {"url": hook.url, "secret": hook.secret, "timeout": HOOK_TIMEOUT, "on-failure": "omit"}}
    path = "/backend"
    if receiver is not None:
        url, secret = receiver.endpoint(path)
        config["webhooks"] = webhooks_config([{"name": "backend", "url": url, "secret": secret, "events": ["*"]}])
    server = Server(binary, workdir, "backend", database, config)
    try:
        server.start()
        backend_checks(server, hook, key, receiver, path)
    except CheckFailed as failure:
        stopped(failure, "the backend part")
    finally:
        server.stop()
        hook.stop()


def backend_checks(server: Server, hook: ClaimsHook, key: str, receiver: Receiver | None, path: str) -> None:
    def users_url(user: str, tail: str = "") -> str:
        return server.url(f"/api/v1/backend/users/{user}{tail}")

    # The hook adds a claim.
    device = str(uuid.uuid4())
    status, pair = server.register_device(device)
    require("register-device answers 201 (the hook answering claims)", status == 201, f"{status} {error_code(pair)}")
    user, device_secret = pair["user_id"], pair.get("device_secret")
    token = claims_of(pair["access_token"])
    check("the claims hook adds a claim (plan: gold, seats: 3 in the access token)",
          token.get("plan") == "gold" and token.get("seats") == 3, str({k: token.get(k) for k in ("plan", "seats")}))
    calls = hook.calls_for(user)
    check("the hook was called, its request verified by standardwebhooks", bool(calls))
    unverified = [c for c in hook.calls if not c["verified"]]
    check("no hook request failed standardwebhooks' verify", not unverified, str(unverified[:1]))
    if calls:
        payload = calls[0]["payload"]
        fields = {"user_id", "kind", "token_kind", "identities", "app_metadata", "amr"}
        check("its payload has user_id, kind, token_kind, identities, app_metadata, amr", fields <= set(payload),
              str(sorted(payload)))
        check("... and no token or secret", not any(s in json.dumps(payload) for s in SEEN_SECRETS))

    # The service key.
    status, profile = call("GET", users_url(user), bearer=key)
    require("GET /api/v1/backend/users/{id} with the service key answers 200", status == 200, f"{status} {error_code(profile)}")
    check("it answers user_id, kind, identities, devices, app_metadata, disabled",
          {"user_id", "kind", "identities", "devices", "app_metadata", "disabled"} <= set(profile or {}), str(sorted(profile or {})))
    check("... disabled false, app_metadata empty", profile.get("disabled") is False and not profile.get("app_metadata"),
          str({k: profile.get(k) for k in ("disabled", "app_metadata")}))
    wanted = {"tier": "pro", "roles": ["editor"], "quota": 5}
    for label, bearer in (("a wrong key", "sk_" + secrets.token_urlsafe(32)), ("no key", None),
                          ("the key with one character changed", key[:-1] + ("A" if key[-1] != "A" else "B"))):
        status, answer = call("PATCH", users_url(user), {"app_metadata": wanted}, bearer=bearer)
        check(f"PATCH with {label} is 401", status == 401, f"{status} {error_code(answer)}")
        status, answer = call("POST", users_url(user, "/disable"), {}, bearer=bearer)
        check(f"disable with {label} is 401", status == 401, f"{status} {error_code(answer)}")
    status, answer = call("GET", users_url(user), bearer="sk_" + secrets.token_urlsafe(32))
    check("GET with a wrong key is 401", status == 401, f"{status}")
    status, profile = call("GET", users_url(user), bearer=key)
    check("... and nothing changed (app_metadata empty, not disabled)",
          status == 200 and not profile.get("app_metadata") and profile.get("disabled") is False,
          str({k: (profile or {}).get(k) for k in ("disabled", "app_metadata")}))
    status, fresh = server.refresh(pair["refresh_token"])
    check("... the session still refreshes", status == 200, f"{status} {error_code(fresh)}")
    if status == 200:
        pair = fresh
    status, answer = call("GET", users_url(str(uuid.uuid4())), bearer=key)
    check("an unknown user is 404 not_found", status == 404 and error_code(answer) == "not_found", f"{status} {error_code(answer)}")

    # app_metadata.
    status, answer = call("PATCH", users_url(user), {"app_metadata": wanted}, bearer=key)
    require("PATCH app_metadata with the service key answers 200", status == 200, f"{status} {error_code(answer)}")
    status, profile = call("GET", users_url(user), bearer=key)
    check("GET shows the app_metadata set", status == 200 and profile.get("app_metadata") == wanted, str((profile or {}).get("app_metadata")))
    status, fresh = server.refresh(pair["refresh_token"])
    require("the next refresh answers 200", status == 200, f"{status} {error_code(fresh)}")
    pair = fresh
    token = claims_of(pair["access_token"])
    check("app_metadata set by PATCH is the app_metadata claim of the next token", token.get("app_metadata") == wanted,
          str(token.get("app_metadata")))
    check("... beside the hook's claim", token.get("plan") == "gold")
    last = (hook.calls_for(user) or [{}])[-1].get("payload") or {}
    check("the hook's request carries the app_metadata", last.get("app_metadata") == wanted, str(last.get("app_metadata")))
    status, answer = call("PATCH", users_url(user), {"app_metadata": {"blob": "x" * 5000}}, bearer=key)
    check("an oversized app_metadata is 400 invalid_request", status == 400 and error_code(answer) == "invalid_request",
          f"{status} {error_code(answer)}")
    status, profile = call("GET", users_url(user), bearer=key)
    check("... and nothing stored", status == 200 and profile.get("app_metadata") == wanted)

    # Disable, then enable.
    status, answer = call("POST", users_url(user, "/disable"), {}, bearer=key)
    require("disable with the service key answers 200", status in (200, 204), f"{status} {error_code(answer)}")
    status, answer = call("GET", server.url("/api/v1/users/me"), bearer=pair["access_token"])
    check("after disable the access token is refused (401: every session revoked)", status == 401, f"{status} {error_code(answer)}")
    status, answer = server.refresh(pair["refresh_token"])
    check("a refresh is 403 user_disabled", status == 403 and error_code(answer) == "user_disabled", f"{status} {error_code(answer)}")
    status, answer = server.register_device(device, device_secret)
    check("register-device (a sign-in) is 403 user_disabled", status == 403 and error_code(answer) == "user_disabled",
          f"{status} {error_code(answer)}")
    status, profile = call("GET", users_url(user), bearer=key)
    check("GET says disabled", status == 200 and profile.get("disabled") is True)
    status, answer = call("POST", users_url(user, "/enable"), {}, bearer=key)
    check("enable answers 200", status in (200, 204), f"{status} {error_code(answer)}")
    status, answer = server.register_device(device, device_secret)
    check("after enable the device signs in again", status in (200, 201), f"{status} {error_code(answer)}")
    if status in (200, 201):
        status, revoked = call("POST", users_url(user, "/revoke-sessions"), {}, bearer=key)
        check("revoke-sessions answers 200", status == 200, f"{status} {error_code(revoked)}")
        status, _ = call("GET", server.url("/api/v1/users/me"), bearer=answer["access_token"])
        check("... and the session's access token is refused (401)", status == 401, f"{status}")
    status, answer = call("DELETE", users_url(user), bearer=key)
    check("DELETE /api/v1/backend/users/{id} answers 200", status in (200, 204), f"{status} {error_code(answer)}")
    status, answer = call("GET", users_url(user), bearer=key)
    check("... then GET is 404 not_found", status == 404 and error_code(answer) == "not_found", f"{status} {error_code(answer)}")

    # The hook misbehaving: slow, reserved claims, oversized, failing.
    def signed_in(mode: str) -> tuple[str, int, Any, float]:
        device = str(uuid.uuid4())
        hook.modes[device] = mode  # a device user's ID is its device ID, lowercase
        started = time.monotonic()
        status, pair = server.register_device(device)
        return device, status, pair, time.monotonic() - started

    device, status, answer, took = signed_in("slow")
    check(f"a slow hook (on-failure omit, timeout {HOOK_TIMEOUT} s) still issues tokens", status == 201, f"{status} {error_code(answer)}")
    check(f"... after about the timeout, not the hook's {HOOK_TIMEOUT + 4} s", took < HOOK_TIMEOUT + 2.5, f"{took:.2f} s")
    check("... without the hook's claims", status == 201 and "plan" not in claims_of(answer["access_token"]))
    check("... and the hook was asked", bool(hook.calls_for(device)))

    device, status, answer = signed_in("reserved")[:3]
    if check("a hook answering reserved claims: tokens issued", status == 201, f"{status} {error_code(answer)}"):
        token = claims_of(answer["access_token"])
        check("... its sub ignored (the user's own)", token.get("sub") == answer["user_id"] == device, str(token.get("sub")))
        check("... iss, aal, exp, amr ignored", token.get("iss") == server.base and token.get("aal") != "aal3"
              and token.get("exp", 0) < 4102444800 and token.get("amr") != ["hwk"],
              str({k: token.get(k) for k in ("iss", "aal", "amr")}))
        check("... the rest merged (plan: red)", token.get("plan") == "red", str(token.get("plan")))

    device, status, answer = signed_in("big")[:3]
    check("an oversized hook answer (over claims.max-bytes): tokens issued under omit", status == 201, f"{status} {error_code(answer)}")
    if status == 201:
        token = claims_of(answer["access_token"])
        check("... without any of its claims", "blob" not in token and "plan" not in token, str(sorted(token)))

    device, status, answer = signed_in("fail")[:3]
    check("a hook answering 500: tokens issued under omit, without its claims",
          status == 201 and "plan" not in claims_of(answer["access_token"]), f"{status} {error_code(answer)}")

    # The backend's changes as webhooks (delivered meanwhile).
    if receiver is not None:
        check("webhook: PATCH app_metadata -> user.updated (change app_metadata)",
              receiver.wait(path, "user.updated", user, change="app_metadata") is not None)
        check("webhook: disable -> user.disabled", receiver.wait(path, "user.disabled", user) is not None)
        check("webhook: ... and session.revoked with reason disabled",
              receiver.wait(path, "session.revoked", user, reason="disabled") is not None)
        check("webhook: enable -> user.updated (change enabled)", receiver.wait(path, "user.updated", user, change="enabled") is not None)
        check("webhook: the backend's DELETE -> user.deleted", receiver.wait(path, "user.deleted", user) is not None)


# ---------------------------------------------------------------- the whole run
def final_checks(receiver: Receiver) -> None:
    print("webhooks: every delivery of the run")
    with receiver.changed:
        requests = list(receiver.requests)
    bad = [r for r in requests if not r["verified"]]
    check(f"standardwebhooks' Webhook.verify accepted every delivery ({len(requests)} requests)", requests and not bad,
          str([(r["path"], r.get("error")) for r in bad[:3]]))
    seen: dict[tuple[str, str], int] = {}
    for r in requests:
        if r["status"] == 200:
            seen[(r["path"], r["id"])] = seen.get((r["path"], r["id"]), 0) + 1
    twice = [k for k, n in seen.items() if n > 1]
    check("no (endpoint, webhook-id) answered 2xx twice", seen and not twice, str(twice[:3]))
    events = [r["event"] for r in requests if r["verified"]]
    check("every event's data has user_id", all(isinstance(e.get("data", {}).get("user_id"), str) for e in events))
    leaked = [e["type"] for r, e in zip([r for r in requests if r["verified"]], events)
              if any(s in r["body"].decode(errors="replace") for s in SEEN_SECRETS)]
    leaked += [e["type"] for e in events if set(map(str, e.get("data", {}).values())) & SEEN_CODES]
    check(f"no token, secret, password or code in any body ({len(SEEN_SECRETS)} secrets, {len(SEEN_CODES)} codes)",
          not leaked and not any(PASSWORD in r["body"].decode(errors="replace") for r in requests), str(leaked[:3]))


def start_smtp_peer(workdir: str) -> tuple[subprocess.Popen, dict]:
    out = os.path.join(workdir, "smtp-peer.out")
    with open(out, "w") as stdout:
        process = subprocess.Popen(
            [sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "smtp_peer.py"),
             "--ca-cert", os.path.join(workdir, "smtp-ca.pem"), "--username", "u", "--password", secrets.token_hex(8)],
            stdout=stdout, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)

    def ready() -> dict | None:
        with open(out) as f:
            for line in f:
                if line.startswith("ready "):
                    return json.loads(line[6:])
        return None

    peer = poll(ready, 15, 0.1)
    if not peer:
        process.kill()
        raise CheckFailed("the SMTP peer did not start")
    return process, peer


def find_psql() -> str:
    """psql on PATH, else the newest of Debian's /usr/lib/postgresql/*/bin (what scripts/pg-cluster runs)."""
    found = shutil.which("psql")
    if found:
        return found
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin/psql"), key=lambda p: int(p.split("/")[4]) if p.split("/")[4].isdigit() else 0)
    return candidates[-1] if candidates else "psql"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument("--latchkey", required=True, help="the latchkey executable")
    parser.add_argument("--postgres-url", help="a PostgreSQL cluster (postgres://…) for the two-process check")
    parser.add_argument("--psql", default=find_psql(), help="psql, to make and drop a schema")
    parser.add_argument("--parts", default="webhooks,backend")
    args = parser.parse_args()
    parts = set(args.parts.split(","))
    # SIGTERM (scripts/test interrupted) ends the run through the finally below: every server stopped, the dir removed.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    started = time.monotonic()
    workdir = tempfile.mkdtemp(prefix="latchkey-webhooks.")
    keep = os.environ.get("LATCHKEY_TEST_KEEP_TMP") == "1"  # as scripts/test: keep the servers' logs and databases
    smtp_process = None
    receiver = None
    try:
        smtp = json.loads(os.environ.get("LATCHKEY_TEST_SMTP_PEER") or "null")
        if smtp is None and "webhooks" in parts:
            smtp_process, smtp = start_smtp_peer(workdir)
        receiver = Receiver() if "webhooks" in parts else None
        if receiver:
            receiver.start()
        psql = [args.psql, args.postgres_url, "-v", "ON_ERROR_STOP=1", "-q"] if args.postgres_url else None
        print(f"interop: webhooks ({', '.join(sorted(parts))}) with standardwebhooks against {args.latchkey}")
        if "webhooks" in parts:
            try:
                webhooks_part(args.latchkey, workdir, smtp, receiver, args.postgres_url, psql)
            except CheckFailed as failure:
                stopped(failure, "the webhooks part")
        if "backend" in parts:
            backend_part(args.latchkey, workdir, smtp, receiver)
        if receiver:
            final_checks(receiver)
    except CheckFailed as failure:
        stopped(failure, "the run")
    finally:
        for server in Server.PROCESSES:
            server.stop()
        failed = not RESULTS or not all(RESULTS)
        if failed:
            for server in Server.PROCESSES:
                print(f"---- last lines of {server.name}'s log ----\n{server.tail()}", end="")
        if receiver:
            receiver.stop()
        if smtp_process:
            smtp_process.terminate()
            smtp_process.wait(10)
        if keep:
            print(f"webhooks_interop: kept {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    print(f"webhooks_interop: {sum(RESULTS)} of {len(RESULTS)} checks passed in {time.monotonic() - started:.1f} s")
    return 0 if RESULTS and all(RESULTS) else 1


if __name__ == "__main__":
    sys.exit(main())
