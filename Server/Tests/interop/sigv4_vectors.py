#!/usr/bin/env python3
"""Tests/interop/sigv4_vectors.py — what botocore's own SigV4 signers make of a list of requests.

Reads a JSON array of request descriptions on stdin and prints a JSON array with botocore's result for each, so the
Swift signer (Sources/LatchkeySigV4) can be compared with the reference implementation request by request
(Tests/LatchkeySigV4Tests/BotocoreComparisonTests.swift runs it). Needs: pip install botocore.

A request description:
  name            a label, echoed back
  method          GET, PUT, POST…
  endpoint        scheme://host[:port]
  path            the path, NOT percent-encoded ("/bucket/a b/é.txt"); botocore's serializer encodes it
                  (percent_encode(path, safe='/~')), as it does a key
  query           [[name, value], …], not encoded; encoded as botocore's prepare_request_dict does
                  (percent_encode_sequence), in this order
  url             instead of endpoint/path/query: the request URL exactly as botocore should see it
  headers         [[name, value], …]
  body            the payload, base64; or "UNSIGNED" for UNSIGNED-PAYLOAD (payload signing disabled)
  service, region
  access_key, secret_key, session_token (or null)
  timestamp       yyyymmddThhmmssZ: botocore's clock is frozen there
  presign_expires null: sign the headers (SigV4Auth, S3SigV4Auth); seconds: presign the URL (SigV4QueryAuth,
                  S3SigV4QueryAuth)
S3 gets botocore's S3 signers (path signed as sent, X-Amz-Content-SHA256 always); every other service the generic
ones (path normalised and encoded twice).

Each result: name, url (the request URL after signing: the presigned URL when presigning), authorization (or null),
signature, signed_headers, headers (the request's headers after signing), canonical_request, string_to_sign.
"""
import base64
import contextlib
import datetime
import json
import sys
import types
from unittest import mock

import botocore.auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from botocore.utils import percent_encode, percent_encode_sequence

SIGV4_TIMESTAMP = "%Y%m%dT%H%M%SZ"


@contextlib.contextmanager
def frozen_clock(timestamp):
    """botocore reads the time in add_auth: get_current_datetime() since 1.31-ish, datetime.datetime.utcnow() before."""
    moment = datetime.datetime.strptime(timestamp, SIGV4_TIMESTAMP)
    if hasattr(botocore.auth, "get_current_datetime"):
        with mock.patch.object(botocore.auth, "get_current_datetime", lambda *args, **kwargs: moment):
            yield
    else:
        class FrozenDatetime(datetime.datetime):
            @classmethod
            def utcnow(cls):
                return moment

        with mock.patch.object(botocore.auth.datetime, "datetime", FrozenDatetime):
            yield


def request_url(description):
    if description.get("url"):
        return description["url"]
    url = description["endpoint"] + percent_encode(description["path"], safe="/~")
    if description.get("query"):
        url += "?" + percent_encode_sequence([(name, value) for name, value in description["query"]])
    return url


def signer_for(description, credentials):
    s3 = description["service"] == "s3"
    expires = description.get("presign_expires")
    if expires is None:
        kind = botocore.auth.S3SigV4Auth if s3 else botocore.auth.SigV4Auth
        return kind(credentials, description["service"], description["region"])
    kind = botocore.auth.S3SigV4QueryAuth if s3 else botocore.auth.SigV4QueryAuth
    return kind(credentials, description["service"], description["region"], expires=expires)


def sign(description):
    credentials = Credentials(description["access_key"], description["secret_key"], description.get("session_token"))
    url = request_url(description)
    unsigned = description["body"] == "UNSIGNED"
    if unsigned and description["service"] != "s3" and not url.startswith("https"):
        raise ValueError(f"{description['name']}: botocore always signs the payload of a non-S3 request over http")
    request = AWSRequest(method=description["method"], url=url, data=b"" if unsigned else base64.b64decode(description["body"]))
    for name, value in description.get("headers", []):
        request.headers[name] = value
    if unsigned:
        # What botocore's operation models and s3 config do to sign without the payload.
        request.context["payload_signing_enabled"] = False
        request.context["client_config"] = types.SimpleNamespace(s3={"payload_signing_enabled": False})

    signer = signer_for(description, credentials)
    captured = {}
    canonical_request, string_to_sign = signer.canonical_request, signer.string_to_sign

    def capture_canonical_request(request):
        captured["canonical_request"] = canonical_request(request)
        return captured["canonical_request"]

    def capture_string_to_sign(request, canonical):
        captured["string_to_sign"] = string_to_sign(request, canonical)
        return captured["string_to_sign"]

    signer.canonical_request = capture_canonical_request
    signer.string_to_sign = capture_string_to_sign
    with frozen_clock(description["timestamp"]):
        signer.add_auth(request)

    authorization = request.headers.get("Authorization")
    if authorization is not None:
        signature = authorization.rsplit("Signature=", 1)[1]
        signed_headers = authorization.split("SignedHeaders=", 1)[1].split(",", 1)[0]
    else:
        signature = request.url.rsplit("X-Amz-Signature=", 1)[1]
        signed_headers = captured["canonical_request"].split("\n")[-2]
    return {
        "name": description["name"],
        "url": request.url,
        "authorization": authorization,
        "signature": signature,
        "signed_headers": signed_headers,
        "headers": [[name, value] for name, value in request.headers.items()],
        "canonical_request": captured["canonical_request"],
        "string_to_sign": captured["string_to_sign"],
    }


def main():
    descriptions = json.load(sys.stdin)
    json.dump([sign(description) for description in descriptions], sys.stdout, indent=1)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
