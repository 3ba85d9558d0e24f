#!/usr/bin/env python3
"""Interop test: the session event stream (GET /api/v1/events) with Python's `websockets`.

Usage: events_interop.py BASE_URL        (e.g. http://127.0.0.1:8080)

What it does, as a non-Swift client would:
  1. registers a fresh random device (POST /api/v1/auth/register-device) for its token pair;
  2. is refused before the upgrade without a token, with a made-up `?token=`, and with a made-up Bearer:
     401, the JSON error envelope {"error": {"code", "message"}} and a `WWW-Authenticate: Bearer` header;
  3. connects with `?token=<access token>`: the first frame is `connected`, with the session's user and session IDs;
  4. sends frames the server does not take (an unknown type, non-JSON, a reauthenticate without a token, one with a
     made-up token, one with another user's token): each is answered with {"type": "error"} and the socket stays open;
  5. refreshes over HTTP (POST /api/v1/auth/refresh) and sends {"type": "reauthenticate", "token": <new>}:
     the answer is `reauthenticated` with the new token's `expires_at`;
  6. opens a second socket with `Authorization: Bearer` (the header form): also `connected`;
  7. logs the session out over HTTP from another client (POST /api/v1/auth/logout, body {}): both sockets receive
     `session.revoked` with reason `logout`, then a close with code 4001;
  8. connecting again with the revoked token is refused with 401.

Needs the standard library and `websockets` (installed by scripts/test into a throwaway venv).
Exits 0 when every check passes; otherwise prints what failed and exits 1. Never prints a whole token.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from typing import Any

import websockets
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

TIMEOUT = 10  # seconds per HTTP request or awaited frame
REVOKED_WITHIN = 5  # seconds from the logout's answer to session.revoked (the server promises about one)


class CheckFailed(Exception):
    pass


failures: list[str] = []


def check(condition: bool, message: str) -> None:
    if condition:
        print(f"  ok   {message}")
    else:
        print(f"  FAIL {message}")
        failures.append(message)


def require(condition: bool, message: str) -> None:
    """A check the following steps depend on: stops the run when it fails."""
    if not condition:
        raise CheckFailed(message)
    print(f"  ok   {message}")


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


def post_json(url: str, expect: int, body: Any, headers: dict[str, str] | None = None) -> Any:
    status, _, raw = http("POST", url, body, headers)
    if status != expect:
        raise CheckFailed(f"POST {url}: expected {expect}, got {status}: {raw[:500]!r}")
    try:
        return json.loads(raw)
    except ValueError as error:
        raise CheckFailed(f"POST {url}: body is not JSON: {raw[:500]!r}") from error


def register(base: str) -> dict[str, Any]:
    pair = post_json(f"{base}/api/v1/auth/register-device", 201, {"device_id": str(uuid.uuid4())})
    for field in ("access_token", "refresh_token", "user_id", "session_id"):
        if not isinstance(pair.get(field), str) or not pair[field]:
            raise CheckFailed(f"register-device answer lacks `{field}`: keys {sorted(pair)}")
    return pair


def short(token: str) -> str:
    return f"{token[:8]}…({len(token)} chars)"


async def receive(ws: ClientConnection, what: str) -> dict[str, Any]:
    """The next frame, parsed; fails the run when none comes in time or it is not a JSON text object."""
    try:
        message = await asyncio.wait_for(ws.recv(), TIMEOUT)
    except asyncio.TimeoutError as error:
        raise CheckFailed(f"{what}: no frame within {TIMEOUT} s") from error
    except ConnectionClosed as error:
        raise CheckFailed(f"{what}: the socket closed instead (code {error.rcvd.code if error.rcvd else None})") from error
    if not isinstance(message, str):
        raise CheckFailed(f"{what}: a binary frame ({len(message)} bytes), not JSON text")
    try:
        frame = json.loads(message)
    except ValueError as error:
        raise CheckFailed(f"{what}: the frame is not JSON: {message[:300]!r}") from error
    if not isinstance(frame, dict) or not isinstance(frame.get("type"), str):
        raise CheckFailed(f"{what}: the frame has no \"type\": {message[:300]!r}")
    return frame


async def expect_refused(url: str, what: str, headers: dict[str, str] | None = None) -> None:
    """The upgrade is refused with 401, the JSON error envelope and WWW-Authenticate."""
    try:
        async with connect(url, additional_headers=headers, open_timeout=TIMEOUT, proxy=None) as ws:
            await ws.close()
        check(False, f"{what}: refused with 401 (the socket was opened)")
        return
    except InvalidStatus as error:
        response = error.response
    except (OSError, websockets.exceptions.InvalidHandshake) as error:
        check(False, f"{what}: refused with 401 (got {type(error).__name__}: {error})")
        return
    check(response.status_code == 401, f"{what}: refused before the upgrade with 401 (got {response.status_code})")
    www = response.headers.get("WWW-Authenticate", "")
    check(www.startswith("Bearer"), f"{what}: WWW-Authenticate: Bearer … (got {www!r})")
    content_type = response.headers.get("Content-Type", "")
    check(content_type.startswith("application/json"), f"{what}: Content-Type is JSON (got {content_type!r})")
    try:
        body = json.loads(response.body or b"")
    except ValueError:
        body = None
    error_object = body.get("error") if isinstance(body, dict) else None
    check(
        isinstance(error_object, dict) and isinstance(error_object.get("code"), str) and isinstance(error_object.get("message"), str),
        f"{what}: body is the envelope {{\"error\": {{\"code\", \"message\"}}}} (got {bytes(response.body or b'')[:200]!r})",
    )


async def expect_error_frame(ws: ClientConnection, sent: str, code: str, what: str) -> None:
    await ws.send(sent)
    frame = await receive(ws, what)
    check(frame.get("type") == "error", f"{what}: answered with type error (got {frame.get('type')!r})")
    check(frame.get("error") == code, f"{what}: error code {code!r} (got {frame.get('error')!r})")
    check(isinstance(frame.get("message"), str) and bool(frame.get("message")), f"{what}: the error frame has a message")


async def still_open(ws: ClientConnection, what: str) -> None:
    """The socket answers a ping: it was not closed."""
    try:
        pong = await ws.ping()
        await asyncio.wait_for(pong, TIMEOUT)
        check(True, f"{what}: the socket is still open (ping answered)")
    except (ConnectionClosed, asyncio.TimeoutError) as error:
        check(False, f"{what}: the socket is still open (got {type(error).__name__})")


async def expect_revoked(ws: ClientConnection, logout_answered: float, what: str) -> None:
    """session.revoked (reason logout), then the 4001 close, soon after the logout's answer."""
    frame = await receive(ws, f"{what}: session.revoked after the logout")
    elapsed = time.monotonic() - logout_answered
    check(frame.get("type") == "session.revoked", f"{what}: receives session.revoked (got {frame.get('type')!r}: {frame!r})")
    check(frame.get("reason") == "logout", f"{what}: session.revoked has reason logout (got {frame.get('reason')!r})")
    check(isinstance(frame.get("at"), str), f"{what}: session.revoked carries `at`")
    check(elapsed < REVOKED_WITHIN, f"{what}: session.revoked came {elapsed * 1000:.0f} ms after the logout's answer (< {REVOKED_WITHIN} s)")
    try:
        extra = await asyncio.wait_for(ws.recv(), TIMEOUT)
        check(False, f"{what}: nothing follows session.revoked but the close (got {str(extra)[:200]!r})")
    except ConnectionClosed as closed:
        code = closed.rcvd.code if closed.rcvd else None
        check(code == 4001, f"{what}: closed by the server with code 4001 (got {code}, reason {closed.rcvd.reason if closed.rcvd else None!r})")
    except asyncio.TimeoutError:
        check(False, f"{what}: closed by the server with code 4001 (still open after {TIMEOUT} s)")


async def run(base: str) -> None:
    address = urllib.parse.urlsplit(base)
    if address.scheme not in ("http", "https"):
        raise CheckFailed(f"BASE_URL must be http(s)://…, got {base!r}")
    ws_base = ("wss" if address.scheme == "https" else "ws") + "://" + address.netloc + address.path.rstrip("/")
    events = ws_base + "/api/v1/events"
    print(f"events: the session event stream of {base} with websockets {websockets.__version__}")

    # 1. Two fresh devices (two users): the session under test and a stranger.
    pair = register(base)
    stranger = register(base)
    access, refresh = pair["access_token"], pair["refresh_token"]
    print(f"  --   session {pair['session_id']}, access token {short(access)}")

    # 2. Refusals before the upgrade.
    await expect_refused(events, "no token")
    forged = access[:-4] + ("AAAA" if not access.endswith("AAAA") else "BBBB")
    await expect_refused(events + "?token=" + urllib.parse.quote(forged, safe=""), "?token= with a forged signature")
    await expect_refused(events + "?token=not-a-token", "?token=not-a-token")
    await expect_refused(events, "Authorization: Bearer with a forged signature", {"Authorization": f"Bearer {forged}"})

    # 3. The query-token socket.
    try:
        ws = await connect(events + "?token=" + urllib.parse.quote(access, safe=""), open_timeout=TIMEOUT, proxy=None)
    except InvalidStatus as error:
        raise CheckFailed(f"?token=<valid>: the upgrade was refused with {error.response.status_code}: {bytes(error.response.body or b'')[:300]!r}") from error
    try:
        first = await receive(ws, "?token=<valid>: the first frame")
        require(first.get("type") == "connected", f"?token=<valid>: the first frame is connected (got {first.get('type')!r})")
        check(first.get("user_id") == pair["user_id"], f"connected names the user (got {first.get('user_id')!r})")
        check(first.get("session_id") == pair["session_id"], f"connected names the session (got {first.get('session_id')!r})")
        check(isinstance(first.get("expires_at"), str), f"connected carries expires_at (got {first.get('expires_at')!r})")
        check(isinstance(first.get("at"), str), "connected carries at")

        # 4. Frames the server does not take: an error frame each, the socket stays open.
        await expect_error_frame(ws, json.dumps({"type": "hello"}), "unknown_type", "an unknown frame type")
        await still_open(ws, "after an unknown frame type")
        await expect_error_frame(ws, "this is not JSON", "bad_frame", "a non-JSON frame")
        await expect_error_frame(ws, json.dumps({"type": "reauthenticate"}), "bad_frame", "reauthenticate without a token")
        await expect_error_frame(ws, json.dumps({"type": "reauthenticate", "token": forged}), "invalid_token", "reauthenticate with a forged token")
        await expect_error_frame(
            ws, json.dumps({"type": "reauthenticate", "token": stranger["access_token"]}), "wrong_user", "reauthenticate with another user's token")
        await still_open(ws, "after the refused frames")

        # 5. Refresh over HTTP, then reauthenticate on the socket.
        newer = post_json(f"{base}/api/v1/auth/refresh", 200, {"refresh_token": refresh})
        new_access = newer.get("access_token")
        require(isinstance(new_access, str) and new_access != access, "refresh gave a new access token")
        await ws.send(json.dumps({"type": "reauthenticate", "token": new_access}))
        answer = await receive(ws, "reauthenticate with the refreshed token")
        check(answer.get("type") == "reauthenticated", f"reauthenticate is answered with reauthenticated (got {answer!r})")
        check(isinstance(answer.get("expires_at"), str), f"reauthenticated carries expires_at (got {answer.get('expires_at')!r})")
        await still_open(ws, "after reauthenticate")

        # 6. A second socket with the header form of the token.
        try:
            header_ws = await connect(events, additional_headers={"Authorization": f"Bearer {new_access}"}, open_timeout=TIMEOUT, proxy=None)
        except InvalidStatus as error:
            raise CheckFailed(f"Authorization: Bearer <valid>: the upgrade was refused with {error.response.status_code}") from error
        try:
            first = await receive(header_ws, "Authorization: Bearer <valid>: the first frame")
            require(first.get("type") == "connected", f"Authorization: Bearer <valid>: the first frame is connected (got {first.get('type')!r})")
            check(first.get("session_id") == pair["session_id"], "the header socket is of the same session")

            # 7. Logout from another HTTP client.
            status, _, raw = http("POST", f"{base}/api/v1/auth/logout", {}, {"Authorization": f"Bearer {new_access}"})
            answered = time.monotonic()
            require(status == 200, f"POST /api/v1/auth/logout answers 200 (got {status}: {raw[:300]!r})")
            try:
                revoked = json.loads(raw).get("revoked_sessions")
            except (ValueError, AttributeError):
                revoked = None
            check(revoked == 1, f"logout ended one session (revoked_sessions {revoked!r})")
            await asyncio.gather(
                expect_revoked(ws, answered, "the ?token= socket"),
                expect_revoked(header_ws, answered, "the Bearer socket"),
            )
        finally:
            await header_ws.close()
    finally:
        await ws.close()

    # 8. The revoked token no longer opens a socket.
    await expect_refused(events + "?token=" + urllib.parse.quote(new_access, safe=""), "?token= with the logged-out session's token")


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    started = time.monotonic()
    try:
        asyncio.run(run(argv[1].rstrip("/")))
    except CheckFailed as error:
        failures.append(str(error))
        print(f"  FAIL {error}")
    if failures:
        print(f"events: {len(failures)} check(s) failed:", file=sys.stderr)
        for failure in failures:
            print(f"  - {failure}", file=sys.stderr)
        return 1
    print(f"events: all checks passed in {time.monotonic() - started:.1f}s (401 refusals, connected, error frames, "
          "reauthenticate, logout -> session.revoked + 4001)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
