"""Checks and HTTP calls shared by the interop suites that report PASS/FAIL lines (admin_browser.py, storage_seeds.py,
webhooks_interop.py, app_attest_interop.py).

Each suite imports what it needs; scripts/test runs them as scripts, so this file's folder is on sys.path.
"""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request

RESULTS: list[bool] = []  # one entry per check, in order; a suite exits 1 when any is False (or there is none)


def check(name, ok, detail=""):
    RESULTS.append(bool(ok))
    print(f"{'PASS' if ok else 'FAIL'}: {name}" + (f"  [{detail}]" if detail else ""), flush=True)
    return bool(ok)


class CheckFailed(Exception):
    """A step the following ones depend on failed: the part stops there (recorded: already a FAIL line)."""

    def __init__(self, message, recorded=False):
        super().__init__(message)
        self.recorded = recorded


def require(name, ok, detail=""):
    """A check the following steps depend on: CheckFailed when it fails."""
    if not check(name, ok, detail):
        raise CheckFailed(name, recorded=True)


def stopped(failure, what):
    """Reports a step that could not go on; a failure no check has reported yet is a FAIL of its own."""
    if not failure.recorded:
        check(str(failure), False)
    print(f"  ({what} stopped here)")


def poll(predicate, seconds, interval=0.05):
    """The first truthy value of predicate() within `seconds`, else the last (falsy) one."""
    deadline = time.monotonic() + seconds
    while True:
        value = predicate()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(interval)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]



def serve(binary, port, base, config_path, log_path, env, name, tail, seconds=60):
    """Starts `latchkey serve` on 127.0.0.1:`port` with `config_path`, its output appended to `log_path`, and waits for
    /api/v1/health/ready: the process, or CheckFailed (with the last lines of `tail()`) when it exits or is not ready."""
    with open(log_path, "ab") as log:
        process = subprocess.Popen(
            [binary, "serve", "--host", "127.0.0.1", "--port", str(port), "--public-url", base, "--config", config_path],
            stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env=env)

    def ready():
        if process.poll() is not None:
            return True
        try:
            with urllib.request.urlopen(f"{base}/api/v1/health/ready", timeout=2) as response:
                return response.status == 200
        except (urllib.error.URLError, OSError):
            return False

    if not poll(ready, seconds, 0.05) or process.poll() is not None:
        raise CheckFailed(f"latchkey serve ({name}) did not become ready; its log ends: {tail(3).strip()}")
    return process


def stop(process):
    """SIGTERM, then SIGKILL when the process has not exited within 15 s."""
    if process and process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(5)


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None  # a 303 is an answer to look at, not to follow


def call(method, url, headers=None, json_body=None, data=None, timeout=30, follow_redirects=True):
    """(status, parsed JSON or raw bytes). Never raises on an HTTP status."""
    headers = dict(headers or {})
    if json_body is not None:
        data = json.dumps(json_body).encode()
        headers["Content-Type"] = "application/json"
    request = urllib.request.Request(url, method=method, headers=headers, data=data)
    opener = urllib.request.build_opener() if follow_redirects else urllib.request.build_opener(NoRedirect)
    try:
        with opener.open(request, timeout=timeout) as response:
            status, body, kind = response.status, response.read(), response.headers.get("Content-Type", "")
    except urllib.error.HTTPError as error:
        status, body, kind = error.code, error.read(), error.headers.get("Content-Type", "")
    return status, (json.loads(body) if "json" in kind and body else body)  # a JSON answer that does not parse raises


def bearer(token):
    return {"Authorization": f"Bearer {token}"}
