"""Seeds 001 (Photolala) and 000 (Stori) end to end: a live Latchkey server, SeaweedFS as S3 + STS, the Apple peer.

Usage: storage_seeds.py LATCHKEY_URL IDP_PEER_URL

scripts/test runs it against its live debug server, configured with storage on SeaweedFS (scripts/seaweedfs) and
Sign in with Apple on Tests/interop/idp_peer.py. The store is reached with boto3, the real AWS SDK for Python, holding
the credentials Latchkey vends; presigned URLs with plain HTTP (urllib, curl).

Environment (scripts/test sets it; the secrets never reach argv or the output):
  LATCHKEY_TEST_S3_ENDPOINT, LATCHKEY_TEST_S3_REGION, LATCHKEY_TEST_S3_BUCKET
  LATCHKEY_TEST_S3_ACCESS_KEY_ID, LATCHKEY_TEST_S3_SECRET_ACCESS_KEY   the store's admin key (uploads the assets)
  LATCHKEY_TEST_S3_STS_SIGNING_KEY_B64   SeaweedFS's STS signing key: an expired session is minted with it
  LATCHKEY_STORAGE_ASSETS_PREFIX         the server's storage.assets-prefix (e.g. assets/)

Prints one PASS/FAIL line per check (statuses and error codes only: never a token, key or signature) and exits 1
when any check failed.
"""

import base64
import hashlib
import hmac
import json
import os
import secrets
import subprocess
import sys
import time
import traceback
import urllib.parse
import uuid
from datetime import datetime, timezone

import boto3
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

from interop_checks import RESULTS, bearer, call, check

LATCHKEY, IDP = (url.rstrip("/") for url in sys.argv[1:3])
ENV = os.environ
BUCKET = ENV["LATCHKEY_TEST_S3_BUCKET"]
ASSETS_PREFIX = ENV["LATCHKEY_STORAGE_ASSETS_PREFIX"]


# --- HTTP ---------------------------------------------------------------------------------------------

def error_code(body):
    return body.get("error", {}).get("code") if isinstance(body, dict) else None


# --- the store ----------------------------------------------------------------------------------------

def s3_client(endpoint, region, access_key, secret_key, session_token=None):
    config = Config(signature_version="s3v4", s3={"addressing_style": "path"}, retries={"max_attempts": 0},
                    connect_timeout=5, read_timeout=30)
    return boto3.client("s3", endpoint_url=endpoint, region_name=region, aws_access_key_id=access_key,
                        aws_secret_access_key=secret_key, aws_session_token=session_token, config=config)


def vended_client(credentials, session_token=None):
    return s3_client(credentials["endpoint"], credentials["region"], credentials["access_key_id"],
                     credentials["secret_access_key"], session_token or credentials["session_token"])


def outcome(action):
    """None when `action` succeeds, else the store's error code and HTTP status (or the exception's type)."""
    try:
        action()
        return None
    except ClientError as error:
        return (error.response.get("Error", {}).get("Code"), error.response.get("ResponseMetadata", {}).get("HTTPStatusCode"))
    except BotoCoreError as error:
        return (type(error).__name__, None)


def denied(result):
    return result is not None and result[0] == "AccessDenied" and result[1] == 403


# --- Sign in with Apple through the peer -------------------------------------------------------------

def sign_in_with_apple():
    """A new Apple ID signs in (identity token, nonce and authorization code, as the app sends them): (status, body)."""
    subject = f"001234.{uuid.uuid4().hex}.0001"
    raw_nonce = secrets.token_urlsafe(32)
    status, minted = call("POST", f"{IDP}/test/mint/apple",
                          json_body={"claims": {"sub": subject, "nonce": hashlib.sha256(raw_nonce.encode()).hexdigest()}})
    if status != 200:
        return status, minted
    code = "c" + secrets.token_hex(16)
    call("POST", f"{IDP}/test/codes", json_body={"code": code, "sub": subject})
    return call("POST", f"{LATCHKEY}/api/v1/auth/apple",
                json_body={"identity_token": minted["token"], "raw_nonce": raw_nonce, "authorization_code": code})


# --- an expired session -------------------------------------------------------------------------------

def b64url(raw):
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def resigned(token, key, **claims):
    """SeaweedFS's session token is an HS256 JWT, and the vended key pair derives from its `sid` alone: the same token
    re-signed with other claims is the same session with, say, an `exp` in the past. SeaweedFS issues no session
    shorter than 900 s, so this stands in for waiting one out."""
    header, payload, _ = token.split(".")
    decoded = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    decoded.update(claims)
    payload = b64url(json.dumps(decoded, separators=(",", ":")).encode())
    signature = hmac.new(key, f"{header}.{payload}".encode(), hashlib.sha256).digest()
    return f"{header}.{payload}.{b64url(signature)}", decoded


def parse_time(text):
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


# --- seed 001: Photolala -----------------------------------------------------------------------------

def seed_001():
    status, user = sign_in_with_apple()
    if not check("001: Sign in with Apple (identity token, nonce, authorization code) creates a user", status == 201,
                 f"HTTP {status}"):
        return
    user_id, token = user["user_id"], user["access_token"]
    status, credentials = call("POST", f"{LATCHKEY}/api/v1/storage/credentials", bearer(token))
    if not check("001: POST /api/v1/storage/credentials with the access token", status == 200, f"HTTP {status}"):
        return
    check_credentials_answer(credentials, user_id)
    own = vended_client(credentials)
    prefix = f"users/{user_id}/"
    key, data = prefix + "photos/x.dat", secrets.token_bytes(1024)

    check("001: PutObject users/<uuid>/photos/x.dat", outcome(lambda: own.put_object(Bucket=BUCKET, Key=key, Body=data)) is None)
    read = {}
    result = outcome(lambda: read.setdefault("body", own.get_object(Bucket=BUCKET, Key=key)["Body"].read()))
    check("001: GetObject gives the bytes back", result is None and read.get("body") == data, str(result or ""))
    listed = {}
    result = outcome(lambda: listed.setdefault("keys", [item["Key"] for item in own.list_objects_v2(
        Bucket=BUCKET, Prefix=prefix).get("Contents", [])]))
    check("001: ListObjectsV2 of users/<uuid>/ lists it", result is None and key in listed.get("keys", []), str(result or ""))

    check_other_folders(own, user_id)
    check_expired_session(credentials, key)

    check("001: DeleteObject", outcome(lambda: own.delete_object(Bucket=BUCKET, Key=key)) is None)
    result = outcome(lambda: own.head_object(Bucket=BUCKET, Key=key))
    check("001: the deleted object is gone", result is not None and result[1] == 404, str(result))

    check_presigned_urls(token, own, prefix)
    check_guests_get_no_storage()


def check_credentials_answer(credentials, user_id):
    fields = ("access_key_id", "secret_access_key", "session_token", "expiration", "expires_in", "bucket", "region",
              "endpoint", "prefix")
    missing = [name for name in fields if credentials.get(name) in (None, "")]
    check("001: the answer has every field", not missing, f"missing {missing}" if missing else "")
    check("001: prefix is users/<our uuid>/; bucket, region and endpoint are the store's",
          credentials.get("prefix") == f"users/{user_id}/" and credentials.get("bucket") == BUCKET
          and credentials.get("region") == ENV["LATCHKEY_TEST_S3_REGION"]
          and credentials.get("endpoint", "").rstrip("/") == ENV["LATCHKEY_TEST_S3_ENDPOINT"].rstrip("/"))
    left = (parse_time(credentials["expiration"]) - datetime.now(timezone.utc)).total_seconds()
    check("001: expiration is expires_in from now (about an hour)",
          abs(left - credentials["expires_in"]) <= 5 and 900 <= credentials["expires_in"] <= 3600,
          f"expires_in={credentials['expires_in']} seconds left={left:.0f}")


def check_other_folders(own, user_id):
    status, other = sign_in_with_apple()
    if not check("001: a second Apple user signs in", status == 201, f"HTTP {status}"):
        return
    status, other_credentials = call("POST", f"{LATCHKEY}/api/v1/storage/credentials", bearer(other["access_token"]))
    other_key = f"users/{other['user_id']}/photos/x.dat"
    check("001: the second user writes in its own folder", status == 200 and outcome(
        lambda: vended_client(other_credentials).put_object(Bucket=BUCKET, Key=other_key, Body=b"theirs")) is None,
        f"HTTP {status}")
    result = outcome(lambda: own.put_object(Bucket=BUCKET, Key=other_key, Body=b"mine"))
    check("001: PutObject in the other user's folder is AccessDenied", denied(result), str(result))
    result = outcome(lambda: own.get_object(Bucket=BUCKET, Key=other_key))
    check("001: GetObject of the other user's photo is AccessDenied", denied(result), str(result))
    result = outcome(lambda: own.put_object(Bucket=BUCKET, Key=f"users/{user_id}b/photos/x.dat", Body=b"sibling"))
    check("001: PutObject in users/<uuid>b/ (same prefix string, another folder) is AccessDenied", denied(result), str(result))
    result = outcome(lambda: own.list_objects_v2(Bucket=BUCKET))
    check("001: ListObjectsV2 of the whole bucket is AccessDenied", denied(result), str(result))
    result = outcome(lambda: own.list_objects_v2(Bucket=BUCKET, Prefix="users/"))
    check("001: ListObjectsV2 of users/ is AccessDenied", denied(result), str(result))


def check_expired_session(credentials, key):
    signing_key = base64.b64decode(ENV["LATCHKEY_TEST_S3_STS_SIGNING_KEY_B64"])
    same, claims = resigned(credentials["session_token"], signing_key)
    check("001: the answer's expiration is the session's own (the token's exp)",
          abs(claims.get("exp", 0) - parse_time(credentials["expiration"]).timestamp()) <= 1)
    # Control: the token re-signed unchanged still works, so the refusal below is the expiry's doing.
    result = outcome(lambda: vended_client(credentials, same).head_object(Bucket=BUCKET, Key=key))
    check("001: control: the session token re-signed unchanged still reads the photo", result is None, str(result or ""))
    now = int(time.time())
    expired, _ = resigned(credentials["session_token"], signing_key, exp=now - 60, iat=now - 3660, nbf=now - 3660)
    result = outcome(lambda: vended_client(credentials, expired).get_object(Bucket=BUCKET, Key=key))
    # SeaweedFS answers InvalidAccessKeyId for an expired session (never ExpiredToken): any 403 is a refusal.
    check("001: the same credentials past their expiration are refused", result is not None and result[1] == 403, str(result))


def check_presigned_urls(token, own, prefix):
    data = secrets.token_bytes(512)
    status, put = call("POST", f"{LATCHKEY}/api/v1/storage/presign", bearer(token),
                       json_body={"method": "PUT", "key": "photos/presigned.dat", "content_type": "application/octet-stream"})
    if not check("001: POST /api/v1/storage/presign for a PUT", status == 200 and put.get("method") == "PUT"
                 and isinstance(put.get("headers"), dict) and put.get("expires_at"), f"HTTP {status}"):
        return
    status, _ = call("PUT", put["url"], put["headers"], data=data)
    check("001: the presigned PUT uploads with plain HTTP", status == 200, f"HTTP {status}")
    read = {}
    result = outcome(lambda: read.setdefault("body", own.get_object(Bucket=BUCKET, Key=prefix + "photos/presigned.dat")["Body"].read()))
    check("001: ... into users/<uuid>/photos/presigned.dat", result is None and read.get("body") == data, str(result or ""))

    status, get = call("POST", f"{LATCHKEY}/api/v1/storage/presign", bearer(token),
                       json_body={"method": "GET", "key": "photos/presigned.dat"})
    check("001: POST /api/v1/storage/presign for a GET", status == 200 and get.get("method") == "GET", f"HTTP {status}")
    if status == 200:
        status, body = call("GET", get["url"], get.get("headers"))
        check("001: the presigned GET downloads with plain HTTP", status == 200 and body == data, f"HTTP {status}")
        status, _ = call("GET", tampered(get["url"]), get.get("headers"))
        check("001: the presigned GET with its signature changed is 403", status == 403, f"HTTP {status}")
    status, body = call("POST", f"{LATCHKEY}/api/v1/storage/presign", bearer(token),
                        json_body={"method": "GET", "key": "../other/photos/x.dat"})
    check("001: presigning a key that leaves the folder is 400", status == 400, f"HTTP {status} {error_code(body)}")
    outcome(lambda: own.delete_object(Bucket=BUCKET, Key=prefix + "photos/presigned.dat"))


def tampered(url):
    """`url` with one character of its X-Amz-Signature changed, and nothing else."""
    name = "X-Amz-Signature="
    start = url.index(name) + len(name)
    end = url.find("&", start) if url.find("&", start) != -1 else len(url)
    signature = url[start:end]
    return url[:start] + signature[:-1] + ("0" if signature[-1] != "0" else "1") + url[end:]


def check_guests_get_no_storage():
    status, guest = call("POST", f"{LATCHKEY}/api/v1/auth/guest", {"X-Device-ID": str(uuid.uuid4())})
    if status == 201:
        status, _ = call("POST", f"{LATCHKEY}/api/v1/storage/credentials", bearer(guest["access_token"]))
    check("001: a guest token gets no storage credentials (403)", status == 403, f"HTTP {status}")


# --- seed 000: Stori ---------------------------------------------------------------------------------

def seed_000():
    device = str(uuid.uuid4())
    status, body = call("POST", f"{LATCHKEY}/api/v1/users/register", json_body={"user_id": device})
    if not check("000: POST /api/v1/users/register with the device UUID", status == 201, f"HTTP {status}"):
        return
    kit = f"kits/{uuid.uuid4().hex}/"
    files = {kit + "kick.wav": secrets.token_bytes(300), kit + "snare.wav": secrets.token_bytes(700)}
    admin = s3_client(ENV["LATCHKEY_TEST_S3_ENDPOINT"], ENV["LATCHKEY_TEST_S3_REGION"], ENV["LATCHKEY_TEST_S3_ACCESS_KEY_ID"],
                      ENV["LATCHKEY_TEST_S3_SECRET_ACCESS_KEY"])
    result = None
    for key, data in files.items():
        result = result or outcome(lambda: admin.put_object(Bucket=BUCKET, Key=ASSETS_PREFIX + key, Body=data))
    if not check(f"000: two assets uploaded under {ASSETS_PREFIX}{kit} with the store's admin key", result is None, str(result or "")):
        return
    only_device = {"X-Device-ID": device}  # no Authorization header, ever

    listed, status, pages = {}, 200, 0
    cursor = None
    while status == 200 and pages < 50:
        query = urllib.parse.urlencode({"prefix": "kits/", **({"cursor": cursor} if cursor else {})})
        status, body = call("GET", f"{LATCHKEY}/api/v1/assets?{query}", only_device)
        pages += 1
        if status == 200:
            listed.update({asset["key"]: asset for asset in body["assets"]})
            cursor = body.get("next_cursor")
            if not cursor:
                break
    check("000: GET /api/v1/assets?prefix=kits/ with X-Device-ID only lists both, with their sizes",
          status == 200 and all(key in listed and listed[key]["size"] == len(data) for key, data in files.items()),
          f"HTTP {status}, {pages} page(s)")

    key = kit + "snare.wav"
    status, answer = call("GET", f"{LATCHKEY}/api/v1/assets/url?{urllib.parse.urlencode({'key': key})}", only_device)
    if check("000: GET /api/v1/assets/url?key=kits/…/snare.wav", status == 200 and answer.get("method") == "GET", f"HTTP {status}"):
        downloaded = curl(answer["url"])
        check("000: curl downloads the asset's bytes from the URL", downloaded == files[key])

    status, body = call("GET", f"{LATCHKEY}/api/v1/assets?prefix=kits/", {"X-Device-ID": str(uuid.uuid4())})
    check("000: an unknown device ID is 401 unknown_device", status == 401 and error_code(body) == "unknown_device",
          f"HTTP {status} {error_code(body)}")
    status, body = call("GET", f"{LATCHKEY}/api/v1/assets/url?key=../users/x", only_device)
    check("000: a key outside the assets prefix (../users/x) is 400", status == 400, f"HTTP {status} {error_code(body)}")
    for key in files:
        outcome(lambda: admin.delete_object(Bucket=BUCKET, Key=ASSETS_PREFIX + key))


def curl(url):
    """The body curl downloads from `url`, or None. The URL goes in on stdin (a config file), never in argv."""
    config = 'url = "' + url.replace("\\", "\\\\").replace('"', '\\"') + '"\n'
    done = subprocess.run(["curl", "-fsS", "--max-time", "30", "-K", "-"], input=config.encode(), capture_output=True)
    return done.stdout if done.returncode == 0 else None


def main():
    for seed in (seed_001, seed_000):
        try:
            seed()
        except Exception as error:  # a crash is a failed check with a verdict; its message may hold a URL, so not shown
            ours = [frame for frame in traceback.extract_tb(error.__traceback__) if frame.filename == __file__]
            check(f"{seed.__name__}: ran to the end", False, f"{type(error).__name__} at line {ours[-1].lineno if ours else '?'}")
    failed = RESULTS.count(False)
    print(f"storage seeds: {len(RESULTS) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
