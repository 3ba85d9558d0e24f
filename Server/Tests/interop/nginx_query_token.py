"""Seed 000's MCP WebSocket through a real nginx, with Latchkey as nginx's auth_request: the token rides in the URL.

Usage: nginx_query_token.py NGINX_URL LATCHKEY_URL
The Latchkey server runs with the rule "GET /api/v1/mcp bearer token=query"; nginx's /api/v1/mcp/ location is the
README's WebSocket one (Tests/interop/nginx.conf.template), in front of Tests/interop/upstream.py, which answers a
handshake with 101 and the identity headers it was given. Exits non-zero with a message on the first failed check."""
import base64
import http.client
import json
import os
import sys
import urllib.parse
import urllib.request
import uuid

nginx, latchkey = sys.argv[1].rstrip("/"), sys.argv[2].rstrip("/")


def check(condition, message):
    if not condition:
        print("FAIL:", message)
        sys.exit(1)
    print("ok:", message)


def handshake(path):
    """A WebSocket opening handshake through nginx: (status, headers)."""
    address = urllib.parse.urlsplit(nginx)
    connection = http.client.HTTPConnection(address.hostname, address.port, timeout=10)
    connection.request("GET", path, headers={
        "Upgrade": "websocket", "Connection": "Upgrade", "Sec-WebSocket-Version": "13",
        "Sec-WebSocket-Key": base64.b64encode(os.urandom(16)).decode(),
    })
    response = connection.getresponse()
    headers = {name.lower(): value for name, value in response.getheaders()}
    connection.close()
    return response.status, headers


device = str(uuid.uuid4())
request = urllib.request.Request(latchkey + "/api/v1/auth/register-device", method="POST",
                                 headers={"Content-Type": "application/json"}, data=json.dumps({"device_id": device}).encode())
with urllib.request.urlopen(request, timeout=10) as response:
    pair = json.loads(response.read())
check(pair.get("access_token", "").count(".") == 2, "a session token from Latchkey")
token = pair["access_token"]

status, _ = handshake("/api/v1/mcp/daw")
check(status == 401, f"no token: nginx answers 401 (got {status})")
status, _ = handshake("/api/v1/mcp/daw?token=" + token[:-4] + ("AAAA" if not token.endswith("AAAA") else "BBBB"))
check(status == 401, f"a forged token in the query: 401 (got {status})")

status, headers = handshake("/api/v1/mcp/daw?token=" + urllib.parse.quote(token, safe=""))
check(status == 101, f"the token in the query opens the socket through nginx (got {status})")
check(headers.get("x-seen-user-id") == pair["user_id"] and headers.get("x-seen-kind") == "session",
      f"the upstream sees the token's user, as for a Bearer token ({headers.get('x-seen-kind')} {headers.get('x-seen-user-id')})")
check(headers.get("x-seen-path", "").startswith("/api/v1/mcp/daw?token="), "the upstream gets the original URI")
print("nginx query token: all checks passed")
