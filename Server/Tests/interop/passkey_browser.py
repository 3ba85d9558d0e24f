#!/usr/bin/env python3
"""The passkey ceremony in a real browser: headless Chromium with a WebDriver virtual authenticator, against a live server.

Usage: passkey_browser.py BASE_URL PAGE_URL SCREENSHOT_DIR
                          [--chromium /usr/bin/chromium] [--chromedriver /usr/bin/chromedriver] [--driver-log PATH]

BASE_URL is the live server, with passkeys on for rp ID `localhost` (passkeys.rp-id) and PAGE_URL's origin among
passkeys.origins and http.cors.allowed-origins. PAGE_URL is Server/Tests/interop/passkey_page/ served on
http://localhost:<port>/ (scripts/test serves it with Python's http.server): a secure context whose origin is an
rp ID `localhost` may use; the page calls the API at BASE_URL (?api=BASE_URL, cross-origin) with fetch.

What it does, as a person with a phone and then a new phone would:
  1. browser A (a fresh profile) with a virtual authenticator (CTAP2, internal transport, resident keys, user
     verification, the user verified): the page registers a device user (POST /api/v1/auth/register-device with a
     new device UUID), asks POST /api/v1/passkeys/register/options with its Bearer, calls navigator.credentials.create
     with PublicKeyCredential.parseCreationOptionsFromJSON(options) and sends credential.toJSON() to
     POST /api/v1/passkeys/register: 201; the authenticator then holds one resident credential for rp ID localhost
     whose user handle is the user UUID's 16 bytes;
  2. that passkey is exported (get_credentials) and browser A quits;
  3. browser B, a new WebDriver session (so a new profile), gets a new virtual authenticator holding only that
     credential (add_credential); its page asks /api/v1/passkeys/authenticate/options (no auth), calls
     navigator.credentials.get with parseRequestOptionsFromJSON(options) and sends assertion.toJSON() with a new
     device_id to POST /api/v1/passkeys/authenticate: 200, the same user_id, an access token whose amr is
     ["hwk", "user"]; GET /api/v1/users/me lists both devices; GET /api/v1/passkeys lists the passkey, used;
     the authenticator's signature counter went up.
Each page is screenshotted (its path printed) and checked for browser console errors (SEVERE entries of the
`browser` log). The browsers are always quit, also on a failure, an exception or SIGTERM.

Needs the standard library, `selenium` (installed by scripts/test into its venv), Debian's chromium and chromium-driver.
Prints one PASS/FAIL line per check (never a token) and exits 1 when any check failed.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import signal
import sys
import time
import traceback
import urllib.parse
import uuid

from selenium import webdriver
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.virtual_authenticator import Protocol, Transport, VirtualAuthenticatorOptions

from interop_checks import RESULTS, check

SCRIPT_TIMEOUT = 30  # seconds for a ceremony (several API calls to a debug server on busy cores)


class CheckFailed(Exception):
    """A check the following steps depend on failed: the run stops."""


def require(name, ok, detail=""):
    if not check(name, ok, detail):
        raise CheckFailed(name)


def claims(token):
    try:
        payload = token.split(".")[1]
        return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    except (AttributeError, IndexError, ValueError):
        return {}


def unb64url(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class Browser:
    """One WebDriver session (chromedriver gives each a new profile) with a virtual authenticator."""

    def __init__(self, name, args):
        self.name = name
        self.args = args
        options = webdriver.ChromeOptions()
        options.binary_location = args.chromium
        for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                         "--window-size=900,700", "--lang=en-US", "--no-first-run", "--disable-extensions",
                         "--disable-background-networking"):
            options.add_argument(argument)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        self.driver = webdriver.Chrome(service=Service(args.chromedriver, log_output=args.driver_log,
                                                       service_args=["--log-level=WARNING"]), options=options)
        self.driver.set_script_timeout(SCRIPT_TIMEOUT)
        self.driver.add_virtual_authenticator(VirtualAuthenticatorOptions(
            protocol=Protocol.CTAP2, transport=Transport.INTERNAL, has_resident_key=True, has_user_verification=True,
            is_user_verified=True))

    def open(self, page_url, base):
        self.driver.get(page_url + "?" + urllib.parse.urlencode({"api": base}))
        context = self.driver.execute_script(
            "return {origin: location.origin, secure: window.isSecureContext,"
            " parse: typeof PublicKeyCredential !== 'undefined'"
            "  && typeof PublicKeyCredential.parseCreationOptionsFromJSON === 'function'"
            "  && typeof PublicKeyCredential.parseRequestOptionsFromJSON === 'function'}")
        require(f"{self.name}: the page on {context['origin']} is a secure context", context["secure"] is True)
        require(f"{self.name}: PublicKeyCredential.parseCreationOptionsFromJSON and parseRequestOptionsFromJSON exist",
                context["parse"] is True)

    def run(self, function):
        """Runs the page's async `function`; its result, or {"error": message} when it threw."""
        return self.driver.execute_async_script(
            "const done = arguments[arguments.length - 1];"
            f"{function}().then(done, error => done({{error: String(error && error.message || error)}}));")

    def settle(self, shot):
        path = os.path.join(self.args.screenshot_dir, f"passkey-{shot}.png")
        self.driver.save_screenshot(path)
        check(f"{self.name}: screenshot {path}", os.path.getsize(path) > 0)
        for entry in self.driver.get_log("browser"):
            if entry.get("level") == "SEVERE":
                check(f"{self.name}: no browser console error", False, entry.get("message", "")[:300])

    def quit(self):
        try:
            self.driver.quit()
        except WebDriverException:
            pass


def run(args):
    base = args.base_url.rstrip("/")
    browsers = []
    try:
        # 1. Browser A: a device user adds a passkey.
        started = time.monotonic()
        a = Browser("browser A", args)
        browsers.append(a)
        check("browser A: headless chromium with a virtual authenticator (CTAP2, internal, resident keys, UV)", True,
              f"{a.driver.capabilities.get('browserVersion', '?')}, {time.monotonic() - started:.1f}s")
        a.open(args.page_url, base)
        registered = a.run("registerWithPasskey")
        require("browser A: register-device, register/options, navigator.credentials.create ran",
                isinstance(registered, dict) and "error" not in registered, str((registered or {}).get("error", ""))[:300])
        passkey = registered.get("passkey") or {}
        require("browser A: POST /api/v1/passkeys/register with credential.toJSON() is 201", registered["status"] == 201,
                f"got {registered['status']} {(passkey.get('error') or {}).get('code', '')}")
        check("browser A: the answer names the passkey (passkey_id, name Chromium, created_at, backed_up)",
              passkey.get("name") == "Chromium" and {"passkey_id", "created_at", "backed_up"} <= set(passkey), str(sorted(passkey)))
        user_id = registered["user_id"]
        check("browser A: options.user.id is the user UUID's 16 bytes", unb64url(registered["user_handle"]) == uuid.UUID(user_id).bytes)
        a.settle("registered")

        credentials = a.driver.get_credentials()
        require("browser A: the authenticator holds one credential", len(credentials) == 1, f"{len(credentials)}")
        credential = credentials[0]
        check("browser A: it is resident (discoverable), for rp ID localhost", credential.is_resident_credential
              and credential.rp_id == "localhost", f"resident {credential.is_resident_credential}, rp {credential.rp_id}")
        check("browser A: its user handle is the user UUID's 16 bytes",
              credential.user_handle is not None and unb64url(credential.user_handle) == uuid.UUID(user_id).bytes)
        check("browser A: its ID is the registered credential's", unb64url(credential.id) == unb64url(registered["credential_id"]))
        count_before = credential.sign_count
        a.quit()
        browsers.remove(a)

        # 2. Browser B: a new profile holding only that passkey signs in.
        b = Browser("browser B", args)
        browsers.append(b)
        check("browser B: a new session and profile, its authenticator empty", b.driver.get_credentials() == [])
        b.driver.add_credential(credential)
        check("browser B: the authenticator holds only the exported passkey",
              [c.id for c in b.driver.get_credentials()] == [credential.id])
        b.open(args.page_url, base)
        signed_in = b.run("signInWithPasskey")
        require("browser B: authenticate/options, navigator.credentials.get ran",
                isinstance(signed_in, dict) and "error" not in signed_in, str((signed_in or {}).get("error", ""))[:300])
        answer = signed_in.get("answer") or {}
        require("browser B: POST /api/v1/passkeys/authenticate with assertion.toJSON() is 200", signed_in["status"] == 200,
                f"got {signed_in['status']} {(answer.get('error') or {}).get('code', '') if isinstance(answer, dict) else ''}")
        check("browser B: the same user_id as browser A's device user", answer.get("user_id") == user_id)
        check("browser B: the assertion's userHandle is the user UUID's 16 bytes",
              signed_in.get("user_handle") and unb64url(signed_in["user_handle"]) == uuid.UUID(user_id).bytes)
        amr = claims(answer.get("access_token", "")).get("amr")
        check("browser B: the access token's amr is [\"hwk\", \"user\"]", amr == ["hwk", "user"], str(amr))
        devices = {d.get("device_id", "").lower() for d in (signed_in.get("me") or {}).get("devices", [])}
        check("browser B: users/me lists the new device (and the first)",
              signed_in["device_id"].lower() in devices and registered["device_id"].lower() in devices, f"{len(devices)} devices")
        listed = (signed_in.get("passkeys") or {}).get("passkeys", [])
        check("browser B: GET /api/v1/passkeys lists the passkey, with a last_used_at",
              len(listed) == 1 and listed[0].get("passkey_id") == passkey.get("passkey_id") and listed[0].get("last_used_at"),
              f"{len(listed)} passkeys")
        after = b.driver.get_credentials()
        check("browser B: the authenticator's signature counter went up",
              len(after) == 1 and after[0].sign_count > count_before, f"{count_before} -> {after[0].sign_count if after else '?'}")
        b.settle("signed-in")
    except Exception as error:  # a crash is a failed check with a verdict
        if isinstance(error, CheckFailed):
            check(str(error), False, "the run stopped here")
        else:
            ours = [frame for frame in traceback.extract_tb(error.__traceback__) if frame.filename == __file__]
            message = (str(error).strip().splitlines() or [""])[0][:200]
            check("ran to the end", False, f"{type(error).__name__} at line {ours[-1].lineno if ours else '?'}: {message}")
        for browser in browsers:
            try:
                browser.driver.save_screenshot(os.path.join(args.screenshot_dir, f"passkey-failure-{browser.name[-1]}.png"))
            except WebDriverException:
                pass
    finally:
        for browser in browsers:
            browser.quit()


def main():
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument("base_url")
    parser.add_argument("page_url", help="the passkey page, e.g. http://localhost:8123/")
    parser.add_argument("screenshot_dir")
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    parser.add_argument("--chromedriver", default="/usr/bin/chromedriver")
    parser.add_argument("--driver-log", help="chromedriver's log (default: SCREENSHOT_DIR/chromedriver-passkeys.log)")
    args = parser.parse_args()
    os.makedirs(args.screenshot_dir, exist_ok=True)
    args.driver_log = args.driver_log or os.path.join(args.screenshot_dir, "chromedriver-passkeys.log")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    started = time.monotonic()
    run(args)
    failed = RESULTS.count(False)
    print(f"passkey browser: {len(RESULTS) - failed} passed, {failed} failed in {time.monotonic() - started:.1f}s")
    return 1 if failed or not RESULTS else 0


if __name__ == "__main__":
    sys.exit(main())
