"""Schemathesis hooks for scripts/test (loaded through SCHEMATHESIS_HOOKS).

Operations that declare a security requirement in /openapi.json get a real Latchkey access token from a
freshly registered device. The token is fetched again whenever a response is 401 (schemathesis then
replays the request once): POST /api/v1/auth/logout, which schemathesis calls too, ends the session the
token belongs to, and without a new one every later Bearer route would only ever answer 401.

Needs LATCHKEY_BASE_URL (e.g. http://127.0.0.1:8080) in the environment.
"""

from __future__ import annotations

import json
import os
import urllib.request
import uuid

import schemathesis

BASE_URL = os.environ["LATCHKEY_BASE_URL"].rstrip("/")


def _declares_security(ctx) -> bool:
    operation = ctx.operation
    raw = operation.definition.raw if isinstance(operation.definition.raw, dict) else {}
    security = raw.get("security", operation.schema.raw_schema.get("security"))
    return bool(security) and any(requirement for requirement in security)


@schemathesis.auth(retry_on=[401]).apply_to(_declares_security)
class LatchkeyDeviceAuth:
    def get(self, case, context):
        body = json.dumps({"device_id": str(uuid.uuid4())}).encode()
        request = urllib.request.Request(
            f"{BASE_URL}/api/v1/auth/register-device",
            data=body,
            method="POST",
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.load(response)["access_token"]

    def set(self, case, data, context):
        case.headers = case.headers or {}
        case.headers["Authorization"] = f"Bearer {data}"
