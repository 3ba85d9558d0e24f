#!/usr/bin/env python3
"""scripts/bench-events.py — the event-socket part of scripts/bench (GET /api/v1/events), a Python load generator.

  bench-events.py --base URL --pid PID [--sockets N] [--users U] [--sessions S] [--events-base URL2]

memory   U registered devices hold N idle event sockets (N/U each, round-robin) opened from this one process; the
         server's VmRSS (/proc/PID/status) is read before (after a warm-up of 200 sockets, opened and closed) and after
         they are all open, and again after they are closed: (after - before) / N is the cost of one idle socket.
latency  S fresh devices, one socket each; then, one session at a time, POST /api/v1/auth/logout (Bearer, body {})
         on a keep-alive connection: the time from the end of the logout's response to the session.revoked frame
         (p50/p99/max; negative = the frame came first), and whether the 4001 close follows.
         With --events-base the sockets are held by a second process (on the same PostgreSQL database) while the
         logouts go to --base: the revocation crosses processes (LISTEN/NOTIFY, or the 1 s poll).

Needs `websockets` (scripts/bench installs it in its venv). Raises its own soft RLIMIT_NOFILE to the hard limit.
Prints the figures on stdout (one block of lines for scripts/bench's report), progress on stderr. Exits 1 when the
server refused or dropped what it should not have (not when a target is missed: the report says so).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import resource
import sys
import time
import urllib.parse
import uuid
from typing import Any

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

OPEN_CONCURRENCY = 200  # handshakes in flight at once
HTTP_CONCURRENCY = 16  # keep-alive connections registering devices
FRAME_TIMEOUT = 5.0  # seconds to wait for a session.revoked before counting it missing
SETTLE = 3.0  # seconds between the last socket opened (or closed) and the VmRSS reading


def say(message: str) -> None:
    print(f"==> events: {message}", file=sys.stderr, flush=True)


class Failed(Exception):
    pass


class HTTPConnection:
    """A minimal HTTP/1.1 keep-alive client on asyncio streams: the logout's answer is timed in the same event loop that
    reads the event frames, without a thread in between."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            try:
                await self.writer.wait_closed()
            except OSError:
                pass
        self.reader = self.writer = None

    async def request(self, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None) -> tuple[int, bytes, float]:
        """(status, body, time.perf_counter() when the whole response was read). Retries once on a fresh connection
        when the kept-alive one was closed by the server."""
        for attempt in (1, 2):
            try:
                return await self._request(method, path, body, headers)
            except (ConnectionError, asyncio.IncompleteReadError, OSError):
                await self.close()
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    async def _request(self, method: str, path: str, body: Any, headers: dict[str, str] | None) -> tuple[int, bytes, float]:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        assert self.reader is not None
        data = b"" if body is None else json.dumps(body).encode()
        lines = [f"{method} {path} HTTP/1.1", f"Host: {self.host}:{self.port}", "Accept: application/json",
                 f"Content-Length: {len(data)}"]
        if body is not None:
            lines.append("Content-Type: application/json")
        lines += [f"{name}: {value}" for name, value in (headers or {}).items()]
        self.writer.write(("\r\n".join(lines) + "\r\n\r\n").encode() + data)
        status_line = await self.reader.readline()
        if not status_line:
            raise ConnectionResetError("the server closed the connection")
        status = int(status_line.split()[1])
        fields: dict[str, str] = {}
        while True:
            line = await self.reader.readline()
            if line in (b"\r\n", b"\n", b""):
                break
            name, _, value = line.decode("latin-1").partition(":")
            fields[name.strip().lower()] = value.strip()
        if "content-length" in fields:
            payload = await self.reader.readexactly(int(fields["content-length"]))
        elif fields.get("transfer-encoding", "").lower() == "chunked":
            payload = b""
            while True:
                size = int((await self.reader.readline()).split(b";")[0], 16)
                chunk = await self.reader.readexactly(size + 2)
                if size == 0:
                    break
                payload += chunk[:-2]
        else:
            payload = await self.reader.read()
            fields["connection"] = "close"
        done = time.perf_counter()
        if fields.get("connection", "").lower() == "close":
            await self.close()
        return status, payload, done


def rss_kb(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise Failed(f"no VmRSS in /proc/{pid}/status")


def percentile(values: list[float], p: float) -> float:
    """Nearest rank."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)]


def raise_fd_limit(needed: int) -> int:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and (hard == resource.RLIM_INFINITY or soft < hard):
        soft = hard if hard != resource.RLIM_INFINITY else max(soft, needed)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    return soft


async def register(host: str, port: int, count: int) -> list[dict[str, Any]]:
    """`count` fresh devices (POST /api/v1/auth/register-device), HTTP_CONCURRENCY at a time."""
    pairs: list[dict[str, Any]] = []
    todo = iter(range(count))

    async def worker() -> None:
        http = HTTPConnection(host, port)
        try:
            for _ in todo:
                status, body, _ = await http.request("POST", "/api/v1/auth/register-device", {"device_id": str(uuid.uuid4())})
                if status != 201:
                    raise Failed(f"register-device answered {status}: {body[:300]!r}")
                pairs.append(json.loads(body))
        finally:
            await http.close()

    await asyncio.gather(*(worker() for _ in range(min(HTTP_CONCURRENCY, count))))
    return pairs


async def open_sockets(events_url: str, tokens: list[str]) -> tuple[list[ClientConnection], list[str]]:
    """One socket per entry of `tokens` (?token=), each past its `connected` frame; (sockets, errors)."""
    gate = asyncio.Semaphore(OPEN_CONCURRENCY)

    async def one(token: str) -> ClientConnection:
        async with gate:
            ws = await connect(events_url + "?token=" + urllib.parse.quote(token, safe=""), proxy=None, compression=None,
                               ping_interval=None, open_timeout=60, close_timeout=2, max_queue=4)
            try:
                frame = json.loads(await asyncio.wait_for(ws.recv(), 30))
            except BaseException:
                await ws.close()
                raise
            if frame.get("type") != "connected":
                await ws.close()
                raise Failed(f"the first frame is {frame.get('type')!r}, not connected")
            return ws

    results = await asyncio.gather(*(one(token) for token in tokens), return_exceptions=True)
    sockets = [r for r in results if isinstance(r, ClientConnection)]
    errors = []
    for r in results:
        if isinstance(r, InvalidStatus):
            errors.append(f"HTTP {r.response.status_code}: {bytes(r.response.body or b'')[:200]!r}")
        elif isinstance(r, BaseException):
            errors.append(f"{type(r).__name__}: {r}")
    return sockets, errors


async def close_sockets(sockets: list[ClientConnection]) -> None:
    gate = asyncio.Semaphore(OPEN_CONCURRENCY)

    async def one(ws: ClientConnection) -> None:
        async with gate:
            await ws.close()

    await asyncio.gather(*(one(ws) for ws in sockets), return_exceptions=True)


def ws_url(base: str) -> str:
    address = urllib.parse.urlsplit(base)
    return ("wss" if address.scheme == "https" else "ws") + "://" + address.netloc + "/api/v1/events"


def host_port(base: str) -> tuple[str, int]:
    address = urllib.parse.urlsplit(base)
    return address.hostname or "127.0.0.1", address.port or 80


async def memory(base: str, pid: int, sockets: int, users: int, out: list[str]) -> bool:
    host, port = host_port(base)
    events = ws_url(base)
    say(f"registering {users} devices to hold {sockets} idle sockets ({math.ceil(sockets / users)} each)")
    pairs = await register(host, port, users)
    tokens = [pairs[i % users]["access_token"] for i in range(sockets)]
    warm, errors = await open_sockets(events, tokens[:200])
    if errors:
        raise Failed(f"warm-up: {len(errors)} of 200 sockets failed, first: {errors[0]}")
    await close_sockets(warm)
    await asyncio.sleep(SETTLE)
    before = rss_kb(pid)
    say(f"VmRSS {before / 1024:.1f} MiB before; opening {sockets} sockets ({OPEN_CONCURRENCY} handshakes at a time)")
    started = time.perf_counter()
    held, errors = await open_sockets(events, tokens)
    took = time.perf_counter() - started
    await asyncio.sleep(SETTLE)
    after = rss_kb(pid)
    dropped = sum(1 for ws in held if ws.close_code is not None)
    say(f"{len(held)} open in {took:.1f}s ({len(held) / took:.0f}/s), VmRSS {after / 1024:.1f} MiB; closing them")
    await close_sockets(held)
    await asyncio.sleep(SETTLE)
    closed = rss_kb(pid)
    per_socket = (after - before) / max(1, len(held))
    verdict = "met" if per_socket < 20 else "MISSED"
    out.append(f"event sockets: VmRSS {before / 1024:.1f} MiB before, {after / 1024:.1f} MiB with {len(held)} idle sockets "
               f"({users} users), {closed / 1024:.1f} MiB after closing them")
    out.append(f"event sockets: {per_socket:.1f} KB per idle socket (target < 20 KB: {verdict}); "
               f"opened at {len(held) / took:.0f}/s ({OPEN_CONCURRENCY} handshakes in flight)")
    ok = True
    if errors:
        out.append(f"event sockets: {len(errors)} of {sockets} failed to open; first: {errors[0]}")
        ok = False
    if dropped:
        out.append(f"event sockets: {dropped} of {len(held)} were closed by the server while idle")
        ok = False
    return ok


async def latency(base: str, events_base: str, sessions: int, label: str, target_ms: float, out: list[str]) -> bool:
    host, port = host_port(base)
    say(f"{label}: registering {sessions} devices")
    pairs = await register(host, port, sessions)
    held, errors = await open_sockets(ws_url(events_base), [p["access_token"] for p in pairs])
    if errors or len(held) != sessions:
        await close_sockets(held)
        raise Failed(f"{label}: {len(errors)} of {sessions} sockets failed to open; first: {errors[0] if errors else '?'}")
    revoked_at: list[float | None] = [None] * sessions
    reasons: list[str | None] = [None] * sessions
    close_codes: list[int | None] = [None] * sessions
    heard = [asyncio.Event() for _ in range(sessions)]

    async def read(i: int, ws: ClientConnection) -> None:
        try:
            async for message in ws:
                frame = json.loads(message)
                if frame.get("type") == "session.revoked" and revoked_at[i] is None:
                    revoked_at[i] = time.perf_counter()
                    reasons[i] = frame.get("reason")
                    heard[i].set()
        except ConnectionClosed:
            pass
        close_codes[i] = ws.close_code
        heard[i].set()

    readers = [asyncio.create_task(read(i, ws)) for i, ws in enumerate(held)]
    say(f"{label}: {sessions} sockets open; logging the sessions out one at a time")
    http = HTTPConnection(host, port)
    after_response: list[float] = []
    after_request: list[float] = []
    request_ms: list[float] = []
    missing = 0
    started = time.perf_counter()
    try:
        for i, pair in enumerate(pairs):
            sent = time.perf_counter()
            status, body, answered = await http.request("POST", "/api/v1/auth/logout", {},
                                                        {"Authorization": f"Bearer {pair['access_token']}"})
            if status != 200:
                raise Failed(f"{label}: logout answered {status}: {body[:300]!r}")
            request_ms.append((answered - sent) * 1000)
            try:
                await asyncio.wait_for(heard[i].wait(), FRAME_TIMEOUT)
            except asyncio.TimeoutError:
                pass
            arrived = revoked_at[i]
            if arrived is None:
                missing += 1
                continue
            after_response.append((arrived - answered) * 1000)
            after_request.append((arrived - sent) * 1000)
    finally:
        await http.close()
    took = time.perf_counter() - started
    done, pending = await asyncio.wait(readers, timeout=10)
    for task in pending:
        task.cancel()
    await close_sockets(held)
    wrong_reason = sum(1 for r in reasons if r is not None and r != "logout")
    not_4001 = sum(1 for c in close_codes if c != 4001)
    if after_response:
        p50, p99, worst = percentile(after_response, 50), percentile(after_response, 99), max(after_response)
        first = sum(1 for v in after_response if v < 0)
        verdict = "met" if p99 < target_ms and missing == 0 else "MISSED"
        out.append(f"{label}: logout's response -> session.revoked: p50 {p50:.2f} ms, p99 {p99:.2f} ms, max {worst:.2f} ms "
                   f"over {len(after_response)} sessions (target p99 < {target_ms:g} ms: {verdict})")
        out.append(f"{label}:   from the logout's request: p50 {percentile(after_request, 50):.2f} ms, p99 "
                   f"{percentile(after_request, 99):.2f} ms; the logout itself p50 {percentile(request_ms, 50):.2f} ms, p99 "
                   f"{percentile(request_ms, 99):.2f} ms; {first} frames came before the response; {took:.1f}s in all")
    ok = True
    if missing:
        out.append(f"{label}: {missing} of {sessions} sockets heard no session.revoked within {FRAME_TIMEOUT:g} s")
        ok = False
    if wrong_reason:
        out.append(f"{label}: {wrong_reason} session.revoked frames had a reason other than logout")
        ok = False
    if not_4001:
        codes = sorted({str(c) for c in close_codes if c != 4001})
        out.append(f"{label}: {not_4001} of {sessions} sockets did not end with close 4001 (got {', '.join(codes)})")
        ok = False
    return ok


async def main(args: argparse.Namespace) -> int:
    limit = raise_fd_limit(args.sockets + args.sessions + 200)
    if limit != resource.RLIM_INFINITY and limit < args.sockets + 200:
        say(f"only {limit} file descriptors here: holding {limit - 200} sockets instead of {args.sockets}")
        args.sockets = limit - 200
    out: list[str] = []
    ok = True
    try:
        if args.sockets > 0:
            ok &= await memory(args.base, args.pid, args.sockets, args.users, out)
        if args.sessions > 0:
            ok &= await latency(args.base, args.base, args.sessions, "revocation, one process", 50, out)
            if args.events_base:
                ok &= await latency(args.base, args.events_base, args.sessions, "revocation, two processes", 1000, out)
    except Failed as error:
        out.append(f"events: FAILED: {error}")
        ok = False
    print("\n".join(out), flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument("--base", required=True, help="the server measured (http://127.0.0.1:PORT)")
    parser.add_argument("--pid", required=True, type=int, help="its process ID, for VmRSS")
    parser.add_argument("--sockets", type=int, default=10000, help="idle sockets for the memory reading (0: skip)")
    parser.add_argument("--users", type=int, default=100, help="devices holding them")
    parser.add_argument("--sessions", type=int, default=1000, help="sessions logged out for the latency (0: skip)")
    parser.add_argument("--events-base", help="a second process on the same database: holds the sockets of a second latency run")
    sys.exit(asyncio.run(main(parser.parse_args())))
