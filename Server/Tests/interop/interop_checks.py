"""Checks and HTTP calls shared by the interop suites that report PASS/FAIL lines (admin_browser.py, storage_seeds.py).

Each suite imports what it needs; scripts/test runs them as scripts, so this file's folder is on sys.path.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request

RESULTS: list[bool] = []  # one entry per check, in order; a suite exits 1 when any is False (or there is none)


def check(name, ok, detail=""):
    RESULTS.append(bool(ok))
    print(f"{'PASS' if ok else 'FAIL'}: {name}" + (f"  [{detail}]" if detail else ""), flush=True)
    return bool(ok)


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
