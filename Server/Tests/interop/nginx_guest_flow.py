"""Seed 003's guest flow through a real nginx in front of an app, with Latchkey as nginx's auth_request.

Usage: nginx_guest_flow.py NGINX_URL LATCHKEY_URL
The Latchkey server runs with the rules "POST /api/edit bearer actions" and "* /public public" and the default
actions meter (5 per day for guests). Exits non-zero with a message on the first failed check."""
import json
import sys
import urllib.error
import urllib.request
import uuid

nginx, latchkey = sys.argv[1].rstrip("/"), sys.argv[2].rstrip("/")


def call(method, url, headers=None, body=None):
    request = urllib.request.Request(url, method=method, headers=headers or {}, data=body)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def check(condition, message):
    if not condition:
        print("FAIL:", message)
        sys.exit(1)
    print("ok:", message)


device = str(uuid.uuid4())
status, _, body = call("POST", latchkey + "/api/v1/auth/guest", {"X-Device-ID": device})
check(status == 201, f"a guest token from Latchkey (got {status})")
token = json.loads(body)["access_token"]

status, _, _ = call("POST", nginx + "/api/edit", {"X-Device-ID": device}, b"{}")
check(status == 401, f"no token: nginx answers 401 (got {status})")

# The client cannot choose the path Latchkey checks: nginx sets X-Original-URI itself, and the path is normalised.
status, _, _ = call("POST", nginx + "/api/edit", {"X-Device-ID": device, "X-Original-URI": "/public"}, b"{}")
check(status == 401, f"a client's own X-Original-URI changes nothing (got {status})")
status, _, _ = call("POST", nginx + "/api/editor", {"X-Device-ID": device}, b"{}")
check(status == 403, f"/api/editor is not covered by the /api/edit rule (got {status})")

# /public passes anyone; an encoded slash or backslash never escapes into it: nginx hands $request_uri on as sent,
# and an app that decodes %2F would serve /public/..%2Fapi/edit as /api/edit, with no identity.
status, _, body = call("POST", nginx + "/public/terms", {"X-Device-ID": device}, b"{}")
check(status == 200 and json.loads(body)["kind"] is None, f"/public passes without a token or identity (got {status})")
for path in ("/public/..%2Fapi/edit", "/public/..%2fapi%2fedit", "/api%2Fedit", "/public/..%5Capi/edit"):
    status, _, body = call("POST", nginx + path, {"X-Device-ID": device}, b"{}")
    check(status == 400, f"{path} is refused, never passed as public (got {status}: {body[:120]!r})")
# Another case of the protected path gets its rule (the app may route case-insensitively).
status, _, _ = call("POST", nginx + "/API/Edit", {"X-Device-ID": device}, b"{}")
check(status == 401, f"/API/Edit needs a token as /api/edit does (got {status})")

headers = {"Authorization": "Bearer " + token, "X-Device-ID": device, "Content-Type": "application/json"}
for attempt in range(1, 6):
    status, response_headers, body = call("POST", nginx + "/api/edit", headers, b"{}")
    check(status == 200, f"edit {attempt} passes nginx (got {status})")
    seen = json.loads(body)
    check(not seen["user_id"] and seen["device_id"] == device and seen["kind"] == "guest",
          f"edit {attempt}: the upstream sees the guest's device, and no user ({seen})")

status, response_headers, body = call("POST", nginx + "/api/edit", headers, b"{}")
check(status == 429, f"the sixth edit is limited (got {status}: {body[:200]!r})")
check(response_headers.get("Retry-After", "").isdigit(), f"the 429 carries Retry-After ({response_headers.get('Retry-After')})")
check(json.loads(body)["error"]["code"] == "rate_limited", "the 429 body is the error envelope")

status, _, _ = call("POST", latchkey + "/api/v1/auth/guest", {"X-Device-ID": device})
token = json.loads(call("POST", latchkey + "/api/v1/auth/guest", {"X-Device-ID": device})[2])["access_token"]
headers["Authorization"] = "Bearer " + token
status, _, _ = call("POST", nginx + "/api/edit", headers, b"{}")
check(status == 429, f"a new guest token does not reset the device's count (got {status})")
print("nginx guest flow: all checks passed")
