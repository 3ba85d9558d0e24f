#!/usr/bin/env python3
"""The admin console (/admin) in a real browser: headless Chromium driven by Selenium, against a live server.

Usage: admin_browser.py BASE_URL SCREENSHOT_DIR --latchkey PATH --database DB
                        [--chromium /usr/bin/chromium] [--chromedriver /usr/bin/chromedriver] [--driver-log PATH]

BASE_URL is the live server (its console enabled: admin.enabled, LATCHKEY_ADMIN_ENABLED=true, on the API's port);
--latchkey and --database are the executable and database the setup link is made with (`latchkey admin create`).
The CLI gets this process's environment: LATCHKEY_MASTER_KEY when the server has one (otherwise the key file beside
the database is used, as by the server), and LATCHKEY_PUBLIC_URL=BASE_URL unless set.

What it does, as an operator would:
  1. `latchkey admin create` -> a setup link; opens it, sets a password, and is held at the enrolment of a second
     factor (admin.require-mfa): /admin redirects there; the page shows the key's QR code as an inline <svg>
     (figure#qr) and the key in code#totp-secret; a wrong code (form#enrol, field `code`) is refused with .flash.error;
     the authenticator app's code (computed here with pyotp when installed, else RFC 6238 in this script) confirms it and
     ten recovery codes are shown (ul#recovery-codes); then the overview (#stats, the inline svg#activity-chart,
     #limits); the link does not work twice;
  2. signs out (form#logout), is refused with a wrong password (401 with .flash.error), gives the password
     (form#login) and is asked for the code (form#second-step on /admin/sign-in/code, /admin redirects there): a wrong
     code is refused with .flash.error, the next step's code signs in; a POST without the csrf field is refused with
     403 (and every POST form carries a hidden `csrf`);
  3. registers a device through the API (POST /api/v1/auth/register-device) and checks GET /api/v1/users/me;
  4. finds the user through form#search by UUID, opens it and revokes its session (the row's form.revoke-session):
     the access token and the refresh token are then refused by the API with 401;
  5. issues an access code on the user page (form#issue-code, with the admin's password entered again in its
     input[name=password]: a wrong one is refused with 401 and issues nothing), reads #issued-code and uses it: as a
     Bearer on /api/v1/users/me (same user_id) and through POST /api/v1/auth/access-code/exchange; finds it on
     /admin/access-codes and revokes it there (form.revoke-code): the code is then refused;
  6. visits the keys page (table#keys, form#rotate-key with input[name=password]) and the audit log (table#audit
     lists session.revoke and access_code.issue; form#audit-filter narrows it to one action);
  7. opens the delete confirmation (a#delete-user), deletes the user (form#confirm-delete, with the password): the
     API then refuses the session the access code was exchanged for, and form#search no longer finds the user.
Every page is loaded in a 1280x900 window, saved as a full-page PNG in SCREENSHOT_DIR (each path is printed), and
checked for browser console errors (SEVERE entries of the `browser` log): any fails the run. On a crash the page it
was on is saved as failure.png / failure.html there. chromedriver's log goes to --driver-log (default
SCREENSHOT_DIR/chromedriver.log). The browser is always quit, also on a failure, an exception or SIGTERM.

Needs the standard library, `selenium` (installed by scripts/test into its venv) and optionally `pyotp`, Debian's chromium and
chromium-driver. Prints one PASS/FAIL line per check (never a token, code, password or setup link) and exits 1
when any check failed.
"""

from __future__ import annotations

import argparse
import base64
import functools
import http.cookiejar
import json
import os
import re
import secrets
import signal
import subprocess
import sys
import time
import traceback
import urllib.error
import urllib.parse
import urllib.request
import uuid

from selenium import webdriver
from selenium.common.exceptions import StaleElementReferenceException, TimeoutException, WebDriverException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import WebDriverWait

import interop_checks
from interop_checks import RESULTS, NoRedirect, bearer, check

try:
    import pyotp
except ImportError:  # RFC 6238 below, as an authenticator app computes it
    pyotp = None

WAIT = 20  # seconds for a page or element (a debug server on 2 busy cores can be slow)
TIMEOUT = 15  # seconds per API request
WINDOW = (1280, 900)


class CheckFailed(Exception):
    """A check the following steps depend on failed: the run stops."""


def require(name, ok, detail=""):
    if not check(name, ok, detail):
        raise CheckFailed(name)


# --- the API -------------------------------------------------------------------------------------------

# Requests to the API: answers such as a 303 are looked at, never followed.
call = functools.partial(interop_checks.call, timeout=TIMEOUT, follow_redirects=False)


def wrong_password_status(base, email, password):
    """The status of a sign-in with a wrong password, as a plain HTTP client (the browser does not show statuses)."""
    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar), NoRedirect)
    with opener.open(base + "/admin/login", timeout=TIMEOUT) as response:
        page = response.read().decode("utf-8", "replace")
    match = re.search(r'<input[^>]*name="csrf"[^>]*value="([^"]*)"', page) or \
        re.search(r'<input[^>]*value="([^"]*)"[^>]*name="csrf"', page)
    form = urllib.parse.urlencode({"csrf": match.group(1) if match else "", "email": email, "password": password})
    try:
        with opener.open(urllib.request.Request(base + "/admin/login", data=form.encode(), method="POST"),
                         timeout=TIMEOUT) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


def totp(secret, at):
    """The 6-digit code of the base32 `secret` at Unix time `at` (RFC 6238: HMAC-SHA-1, 30-second steps)."""
    if pyotp is not None:
        return pyotp.TOTP(secret).at(int(at))
    import hashlib
    import hmac
    key = base64.b32decode(secret.upper() + "=" * (-len(secret) % 8))
    mac = hmac.new(key, int(at // 30).to_bytes(8, "big"), hashlib.sha1).digest()
    offset = mac[-1] & 0x0F
    return f"{(int.from_bytes(mac[offset:offset + 4], 'big') & 0x7FFFFFFF) % 1_000_000:06d}"


def next_step_after(step):
    """Waits until the 30-second step after `step` has begun (a code is accepted once per step); returns the time."""
    while int(time.time() // 30) <= step:
        time.sleep(0.5)
    return time.time()


def jwt_claims(token):
    """The payload of a JWT, unverified (only to find its jti), or {}."""
    try:
        payload = token.split(".")[1]
        return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    except (IndexError, ValueError):
        return {}


# --- the browser -----------------------------------------------------------------------------------------


def is_stale(element):
    """Whether `element` left the document: a new page replaced it. Chromium's driver says so either as a stale element
    or, when the old page goes while the check runs, as an inspector error that the node does not belong to the document
    (EC.staleness_of knows only the first, and raised the second as a failure)."""
    try:
        element.is_enabled()
        return False
    except StaleElementReferenceException:
        return True
    except WebDriverException as error:
        if "does not belong to the document" in str(error):
            return True
        raise


class Browser:
    def __init__(self, base, shots, chromium, chromedriver, driver_log):
        self.base = base
        self.shots = shots
        self.page = "start"
        self.allowed = ()  # error statuses the current page's own document may answer with
        self.shot_count = 0
        options = webdriver.ChromeOptions()
        options.binary_location = chromium
        for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                         f"--window-size={WINDOW[0]},{WINDOW[1]}", "--lang=en-US", "--no-first-run",
                         "--disable-extensions", "--disable-background-networking"):
            options.add_argument(argument)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        # The driver at a known path: Selenium Manager is not asked to download anything.
        self.driver = webdriver.Chrome(service=Service(chromedriver, log_output=driver_log,
                                                       service_args=["--log-level=WARNING"]),
                                       options=options)
        # The viewport itself 1280x900 (the window size counts the headless window's frame too).
        self.driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                                    {"width": WINDOW[0], "height": WINDOW[1], "deviceScaleFactor": 1, "mobile": False})
        self.driver.set_page_load_timeout(WAIT * 2)
        self.wait = WebDriverWait(self.driver, WAIT)

    def quit(self):
        self.driver.quit()

    # Navigation ---------------------------------------------------------------------------------------
    def url(self, path):
        return self.base + path

    def path(self):
        parts = urllib.parse.urlsplit(self.driver.current_url)
        return parts.path + (f"?{parts.query}" if parts.query else "")

    def get(self, path, name, allow_status=()):
        """Loads BASE_URL+path as page `name`; `allow_status`: error statuses this document may answer with."""
        self.console()  # whatever the page before logged late (a favicon, say) counts against it
        self.page = name
        self.allowed = allow_status
        self.driver.get(self.url(path))
        self.wait.until(lambda d: d.execute_script("return document.readyState") == "complete")

    def find(self, css, within=None):
        return (within or self.driver).find_element(By.CSS_SELECTOR, css)

    def find_all(self, css, within=None):
        return (within or self.driver).find_elements(By.CSS_SELECTOR, css)

    def wait_for(self, css, what=None):
        """The first element matching css once present; raises CheckFailed (naming it) after WAIT seconds."""
        try:
            return self.wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, css)))
        except TimeoutException:
            raise CheckFailed(f"{self.page}: no {what or css} within {WAIT}s (at {self.path()})") from None

    def has(self, css):
        return bool(self.find_all(css))

    def submit(self, form_css, fields=None, name=None, allow_status=(), form=None):
        """Fills `fields` (input name -> value) in the form and presses its submit button; waits for the next page."""
        form = form or self.wait_for(form_css)
        for field, value in (fields or {}).items():
            element = self.find(f'[name="{field}"]', form)
            element.clear()
            element.send_keys(value)
        buttons = self.find_all("button[type=submit], input[type=submit], button:not([type])", form)
        if not buttons:
            raise CheckFailed(f"{self.page}: {form_css} has no submit button")
        self.click_to(buttons[0], name or self.page, allow_status, f"submitting {form_css}")

    def click_to(self, element, name, allow_status=(), what="following a link"):
        """Clicks a link or button that loads a new page, named `name`; waits for it."""
        html = self.find("html")
        self.console()
        self.page = name
        self.allowed = allow_status
        element.click()
        try:
            self.wait.until(lambda _: is_stale(html))
        except TimeoutException:
            raise CheckFailed(f"{what}: no new page within {WAIT}s") from None
        self.wait.until(lambda d: d.execute_script("return document.readyState") == "complete")

    # Console and screenshots ------------------------------------------------------------------------
    def console(self):
        """Fails the current page for each SEVERE browser-log entry (but its own document's allowed error status)."""
        allowed = self.allowed
        try:
            entries = self.driver.get_log("browser")
            document = self.driver.current_url.split("#")[0]
        except WebDriverException as error:
            check(f"{self.page}: browser log readable", False, type(error).__name__)
            return
        for entry in entries:
            if entry.get("level") != "SEVERE":
                continue
            message = entry.get("message", "")
            if (entry.get("source") == "network" and message.startswith(document + " ")
                    and any(f"status of {status} " in message for status in allowed)):
                continue  # the error page we asked for (a 401 sign-in answer): Chrome logs its status
            if "/favicon.ico" in message:
                message += " (a browser asks every site for /favicon.ico: serve one, or name one with <link rel=icon>)"
            check(f"{self.page}: no browser console error", False, redact(message)[:400])
        self.allowed = ()

    def screenshot(self, name):
        """The whole page (not only the 900 px of the window) as SCREENSHOT_DIR/NN-name.png; prints the path."""
        self.shot_count += 1
        path = os.path.join(self.shots, f"{self.shot_count:02d}-{name}.png")
        metrics = self.driver.execute_cdp_cmd("Page.getLayoutMetrics", {})
        size = metrics.get("cssContentSize") or metrics["contentSize"]
        width, height = max(int(size["width"]), WINDOW[0]), max(int(size["height"]), 1)
        shot = self.driver.execute_cdp_cmd("Page.captureScreenshot", {
            "format": "png", "captureBeyondViewport": True,
            "clip": {"x": 0, "y": 0, "width": width, "height": height, "scale": 1}})
        with open(path, "wb") as file:
            file.write(base64.b64decode(shot["data"]))
        check(f"{self.page}: full-page screenshot {path} ({width}x{height})", os.path.getsize(path) > 0)

    def settle(self, shot=None):
        """The end of a page: its screenshot (when named) and its console checked."""
        if shot:
            self.screenshot(shot)
        self.console()

    # Page-level checks ------------------------------------------------------------------------------
    def text(self, css):
        return self.find(css).text if self.has(css) else ""

    def flash(self):
        """(text of .flash, whether it is .flash.error), or (None, None) when there is no .flash."""
        flashes = self.find_all(".flash")
        if not flashes:
            return None, None
        error = any("error" in (f.get_attribute("class") or "").split() for f in flashes)
        return " / ".join(f.text.strip() for f in flashes), error

    def check_signed_in_page(self):
        """nav#nav with every section's link and form#logout; each POST form carries a non-empty hidden csrf."""
        page = self.page
        if not check(f"{page}: nav#nav", self.has("nav#nav"), self.path()):
            return
        hrefs = {urllib.parse.urlsplit(a.get_attribute("href") or "").path for a in self.find_all("nav#nav a[href]")}
        missing = [p for p in ("/admin", "/admin/users", "/admin/access-codes", "/admin/keys", "/admin/audit")
                   if p not in hrefs]
        check(f"{page}: nav#nav links to every section", not missing, f"missing {missing}" if missing else "")
        check(f"{page}: form#logout posts to /admin/logout", self.has("form#logout")
              and urllib.parse.urlsplit(self.find("form#logout").get_attribute("action") or "").path == "/admin/logout")
        self.check_csrf_fields()

    def check_csrf_fields(self):
        bare = self.driver.execute_script("""
            return Array.from(document.querySelectorAll('form')).filter(function (form) {
                return (form.getAttribute('method') || 'get').toLowerCase() === 'post';
            }).filter(function (form) {
                var field = form.querySelector('input[type=hidden][name=csrf]');
                return !field || !field.value;
            }).map(function (form) { return form.id || form.className || form.getAttribute('action'); });""")
        check(f"{self.page}: every POST form has a hidden csrf field", not bare, f"without: {bare}" if bare else "")

    def cookie_header(self):
        return "; ".join(f"{c['name']}={c['value']}" for c in self.driver.get_cookies())


def redact(text):
    """A browser message without anything token-like (setup tokens, JWTs) in it."""
    text = re.sub(r"token=[^&\s\"']+", "token=…", text)
    return re.sub(r"eyJ[\w-]+\.[\w-]+\.[\w-]+", "<jwt>", text)


# --- the run ---------------------------------------------------------------------------------------------

def admin_setup_link(args, base, email):
    env = dict(os.environ)
    env.setdefault("LATCHKEY_PUBLIC_URL", base)
    done = subprocess.run([args.latchkey, "admin", "create", email, "--database", args.database],
                          env=env, capture_output=True, text=True, timeout=120)
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    require("`latchkey admin create` exits 0 and prints one line", done.returncode == 0 and len(lines) == 1,
            f"exit {done.returncode}, {len(lines)} line(s); stderr: {done.stderr.strip()[:300]}")
    link = urllib.parse.urlsplit(lines[0].strip())
    query = urllib.parse.parse_qs(link.query)
    require("the line is a setup link <public-url>/admin/setup?token=…",
            link.scheme in ("http", "https") and link.path.endswith("/admin/setup") and query.get("token"),
            f"path {link.path!r}, query keys {sorted(query)}")
    ours = urllib.parse.urlsplit(base)
    if (link.scheme, link.netloc) != (ours.scheme, ours.netloc):
        print(f"note: the setup link's origin {link.scheme}://{link.netloc} is not {base}: opening it on {base}")
    return link.path + "?" + link.query


def run(args):
    base = args.base_url.rstrip("/")
    b = None
    try:
        email = f"admin-{uuid.uuid4().hex[:8]}@example.com"
        setup = admin_setup_link(args, base, email)
        password = "Lk-" + secrets.token_urlsafe(24)

        b = Browser(base, args.screenshot_dir, args.chromium, args.chromedriver,
                    args.driver_log or os.path.join(args.screenshot_dir, "chromedriver.log"))
        check("headless chromium started", True, b.driver.capabilities.get("browserVersion", "?"))

        # 1. The setup link: a password, then the overview.
        b.get(setup, "setup page")
        b.wait_for("form#setup")
        b.check_csrf_fields()
        b.settle("setup")
        b.submit("form#setup", {"password": password, "password_confirm": password}, name="enrolment (after setup)")
        b.wait_for("form#enrol", "form#enrol after setting the password")
        require("setup: held at the enrolment /admin/account/second-factor", b.path() == "/admin/account/second-factor", b.path())
        check("enrolment: the QR code is an inline <svg> (figure#qr svg)", b.has("figure#qr svg"))
        check("enrolment: no nav#nav before the enrolment", not b.has("nav#nav"))
        b.check_csrf_fields()
        secret = b.text("code#totp-secret").strip()
        require("enrolment: the key in code#totp-secret is base32 of 160 bits or more",
                re.fullmatch(r"[A-Z2-7]{32,}", secret) is not None, f"{len(secret)} characters")
        b.settle("enrolment")
        b.get("/admin", "overview (before the enrolment)")
        check("enrolment: /admin sends an admin without a factor back to the enrolment",
              b.path() == "/admin/account/second-factor", b.path())
        b.settle()
        enrolled_at = time.time()
        wrong_code = "000000" if totp(secret, enrolled_at) != "000000" else "111111"
        b.submit("form#enrol", {"code": wrong_code}, name="enrolment (wrong code)", allow_status=(400,))
        text, error = b.flash()
        check("enrolment: a wrong code shows .flash.error", error is True, repr(text))
        b.settle()
        enrolled_at = time.time()
        b.submit("form#enrol", {"code": totp(secret, enrolled_at)}, name="recovery codes")
        b.wait_for("ul#recovery-codes", "ul#recovery-codes after confirming")
        recovery = [li.text.strip() for li in b.find_all("ul#recovery-codes li")]
        check("enrolment: ten recovery codes XXXXX-XXXXX are shown",
              len(recovery) == 10 and all(re.fullmatch(r"[A-Z2-7]{5}-[A-Z2-7]{5}", c) for c in recovery), f"{len(recovery)} codes")
        b.settle("recovery-codes")
        b.click_to(b.find('a[href="/admin"].button'), "overview (after the enrolment)")
        b.wait_for("nav#nav", "nav#nav after the enrolment")
        require("enrolment: signed in and on /admin", b.path() == "/admin", b.path())
        b.check_signed_in_page()
        for css in ("#stats", "svg#activity-chart", "#limits"):
            check(f"overview: {css}", b.has(css))
        b.settle()
        status, body = call("GET", base + setup)
        check("setup link works once: a second GET no longer shows form#setup",
              status >= 400 or b'id="setup"' not in (body if isinstance(body, bytes) else b""), f"status {status}")

        # 2. Sign out, a wrong password, sign in.
        b.submit("form#logout", name="after sign-out")
        b.settle()
        b.get("/admin", "overview (signed out)", allow_status=(401, 403))
        check("signed out: /admin shows no nav#nav", not b.has("nav#nav"), b.path())
        b.settle()
        b.get("/admin/login", "login page")
        b.wait_for("form#login")
        b.check_csrf_fields()
        b.settle("login")
        b.submit("form#login", {"email": email, "password": password + "x"}, name="login (wrong password)",
                 allow_status=(401,))
        text, error = b.flash()
        check("login: a wrong password shows .flash.error", error is True, repr(text))
        check("login: a wrong password does not sign in", not b.has("nav#nav"))
        b.settle()
        status = wrong_password_status(base, email, password + "x")
        check("login: a wrong password answers 401", status == 401, f"status {status}")
        b.get("/admin/login", "login page")
        b.submit("form#login", {"email": email, "password": password}, name="code page")
        b.wait_for("form#second-step", "form#second-step after the password")
        require("login: the password leads to the code page /admin/sign-in/code", b.path() == "/admin/sign-in/code", b.path())
        check("code page: form#second-step has the field `code`", b.has('form#second-step input[name="code"]'))
        b.check_csrf_fields()
        b.settle("code-page")
        b.get("/admin", "overview (before the code)")
        check("code page: /admin sends a sign-in waiting for the code back to it", b.path() == "/admin/sign-in/code", b.path())
        b.settle()
        b.submit("form#second-step", {"code": wrong_code}, name="code page (wrong code)", allow_status=(400,))
        text, error = b.flash()
        check("code page: a wrong code shows .flash.error", error is True, repr(text))
        check("code page: a wrong code does not sign in", not b.has("nav#nav"))
        b.settle()
        # The enrolment's code was spent: the next step's code (a code is accepted once).
        now = next_step_after(int(enrolled_at // 30))
        b.submit("form#second-step", {"code": totp(secret, now)}, name="overview")
        b.wait_for("nav#nav", "nav#nav after the code")
        require("login: password and code sign in, on /admin", b.path() == "/admin", b.path())
        b.check_signed_in_page()
        b.settle("overview")
        status, _ = call("POST", base + "/admin/logout", data=b"",
                         headers={"Cookie": b.cookie_header(), "Content-Type": "application/x-www-form-urlencoded"})
        check("a POST without the csrf field is refused with 403", status == 403, f"POST /admin/logout: {status}")
        b.get("/admin", "overview")
        check("... and the console session is still signed in", b.has("nav#nav"))
        b.settle()

        # 3. A user through the API.
        device = str(uuid.uuid4())
        status, pair = call("POST", base + "/api/v1/auth/register-device", json_body={"device_id": device})
        require("API: register-device 201 with a token pair", status == 201 and isinstance(pair, dict)
                and all(k in pair for k in ("access_token", "refresh_token", "user_id")), f"status {status}")
        user, session = pair["user_id"], pair.get("session_id")
        status, me = call("GET", base + "/api/v1/users/me", headers=bearer(pair["access_token"]))
        check("API: users/me 200 for the new user", status == 200 and isinstance(me, dict) and me.get("user_id") == user,
              f"status {status}")
        session = session or (me.get("session_id") if isinstance(me, dict) else None)

        # 4. Find it, open it, revoke its session.
        b.click_to(b.find("nav#nav a[href$='/admin/users']"), "users")
        b.wait_for("form#search")
        b.check_signed_in_page()
        b.settle()
        b.submit("form#search", {"q": user}, name="users (search by UUID)")
        row = b.wait_for(f'table#users tr[data-user-id="{user}"]', "the user's row in table#users")
        check("users: the search by UUID finds the user", True)
        b.check_signed_in_page()
        b.settle("users")
        b.click_to(b.find(f'a[href="/admin/users/{user}"]', row), "user")
        b.wait_for("h1")
        check("user: h1 names the user's UUID", user in b.text("h1"), repr(b.text("h1"))[:120])
        for css in ("table#devices", "table#sessions", "form#revoke-all", "form#budget input[name=limit]",
                    "table#identities", "table#access-codes", "form#issue-code input[name=expires_in]",
                    "form#issue-code input[name=note]", f'a#delete-user[href$="/admin/users/{user}/delete"]'):
            check(f"user: {css}", b.has(css))
        check("user: table#devices lists the device", device.lower() in b.text("table#devices").lower())
        b.check_signed_in_page()
        b.settle("user")
        require("user: the session's row tr[data-session-id] in table#sessions",
                session and b.has(f'table#sessions tr[data-session-id="{session}"]'),
                f"rows: {[r.get_attribute('data-session-id') for r in b.find_all('table#sessions tr[data-session-id]')]}")
        form = b.find(f'table#sessions tr[data-session-id="{session}"] form.revoke-session')
        b.submit("form.revoke-session", form=form, name="user (session revoked)")
        text, error = b.flash()
        check("revoke session: a .flash, not an error", text is not None and not error, repr(text))
        check("revoke session: the row is gone or marked revoked",
              not b.has(f'table#sessions tr[data-session-id="{session}"] form.revoke-session'))
        b.settle()
        status, _ = call("GET", base + "/api/v1/users/me", headers=bearer(pair["access_token"]))
        check("API: the revoked session's access token gets 401", status == 401, f"status {status}")
        status, _ = call("POST", base + "/api/v1/auth/refresh", json_body={"refresh_token": pair["refresh_token"]})
        check("API: the revoked session's refresh token gets 401", status == 401, f"status {status}")

        # 5. An access code.
        b.get(f"/admin/users/{user}", "user")
        b.submit("form#issue-code", {"expires_in": "30d", "note": "admin_browser.py", "password": password + "x"},
                 name="issue code (wrong password)", allow_status=(401,))
        check("issue code: a wrong password is refused (h1 Not done, no #issued-code)",
              "Not done" in b.text("h1") and not b.has("#issued-code"), repr(b.text("h1"))[:80])
        b.settle()
        b.get(f"/admin/users/{user}", "user")
        check("user: form#issue-code asks for the password again", b.has("form#issue-code input[name=password][type=password]"))
        b.submit("form#issue-code", {"expires_in": "30d", "note": "admin_browser.py", "password": password}, name="issued code")
        code_element = b.wait_for("#issued-code")
        code = code_element.text.strip() or (code_element.get_attribute("value") or "").strip()
        check("issued code: #issued-code holds a JWT", code.count(".") == 2 and code.startswith("eyJ"),
              f"{len(code)} characters")
        text, error = b.flash()
        check("issued code: a .flash, not an error", text is not None and not error, repr(text))
        check("issued code: a link back to the user", b.has(f'a[href="/admin/users/{user}"]'))
        b.check_signed_in_page()
        b.settle("issued-code")
        status, me = call("GET", base + "/api/v1/users/me", headers=bearer(code))
        check("API: the code as a Bearer on users/me is 200 for the same user",
              status == 200 and isinstance(me, dict) and me.get("user_id") == user, f"status {status}")
        status, exchanged = call("POST", base + "/api/v1/auth/access-code/exchange", json_body={"access_code": code})
        exchanged_ok = status == 200 and isinstance(exchanged, dict) and "access_token" in exchanged
        check("API: access-code/exchange 200 with a token pair", exchanged_ok and "refresh_token" in exchanged,
              f"status {status}")
        jti = jwt_claims(code).get("jti")
        b.click_to(b.find(f'a[href="/admin/users/{user}"]'), "user")
        b.wait_for("table#access-codes")
        check("user: table#access-codes lists the code", not jti or jti in b.find("table#access-codes").get_attribute("innerHTML"))
        b.settle()

        # Access codes: the list and a revocation.
        b.get("/admin/access-codes", "access codes")
        b.wait_for("table#codes")
        b.check_signed_in_page()
        b.settle("access-codes")
        if check("access codes: the code has a row tr[data-code-id=<jti>]", jti and b.has(f'tr[data-code-id="{jti}"]'),
                 f"jti {'present' if jti else 'absent from the code'}"):
            form = b.find(f'tr[data-code-id="{jti}"] form.revoke-code')
            b.submit("form.revoke-code", form=form, name="access codes (code revoked)")
            text, error = b.flash()
            check("revoke code: a .flash, not an error", text is not None and not error, repr(text))
            b.settle()
            status, _ = call("GET", base + "/api/v1/users/me", headers=bearer(code))
            check("API: the revoked code gets 401", status == 401, f"status {status}")
            if exchanged_ok:
                status, _ = call("GET", base + "/api/v1/users/me", headers=bearer(exchanged["access_token"]))
                print(f"note: the session the code was exchanged for answers {status} after the code's revocation")

        # 6. Keys and the audit log.
        b.get("/admin/keys", "keys")
        b.wait_for("table#keys")
        check("keys: form#rotate-key", b.has("form#rotate-key"))
        check("keys: form#rotate-key asks for the password again", b.has("form#rotate-key input[name=password][type=password]"))
        check("keys: table#keys has a key", len(b.find_all("table#keys tbody tr")) >= 1)
        b.check_signed_in_page()
        b.settle("keys")

        b.get("/admin/audit", "audit")
        audit = b.wait_for("table#audit")
        headers = [h.text.strip().lower() for h in b.find_all("table#audit th")]
        expected = ["time", "actor", "action", "target", "source", "details"]
        check("audit: columns time, actor, action, target, source, details",
              all(any(name in h for h in headers) for name in expected), f"headers {headers}")
        content = audit.text
        check("audit: table#audit lists session.revoke", "session.revoke" in content)
        check("audit: table#audit lists access_code.issue", "access_code.issue" in content)
        check("audit: form#audit-filter with action and q",
              b.has("form#audit-filter input[name=action]") and b.has("form#audit-filter input[name=q]"))
        b.check_signed_in_page()
        b.settle("audit")
        b.submit("form#audit-filter", {"action": "access_code.issue", "q": ""}, name="audit (filtered)")
        filtered = b.wait_for("table#audit").text
        check("audit: filtering by action access_code.issue keeps it and drops session.revoke",
              "access_code.issue" in filtered and "session.revoke" not in filtered)
        b.settle()

        # 7. The delete confirmation, then the deletion.
        b.get(f"/admin/users/{user}", "user")
        b.click_to(b.wait_for("a#delete-user"), "delete confirmation")
        b.wait_for("form#confirm-delete")
        check("delete: on /admin/users/<uuid>/delete", b.path() == f"/admin/users/{user}/delete", b.path())
        b.check_signed_in_page()
        b.settle("delete-user")
        check("delete: form#confirm-delete asks for the password again",
              b.has("form#confirm-delete input[name=password][type=password]"))
        b.submit("form#confirm-delete", {"password": password}, name="users (after delete)")
        check("delete: redirected to /admin/users", urllib.parse.urlsplit(b.driver.current_url).path == "/admin/users",
              b.path())
        text, error = b.flash()
        check("delete: a .flash, not an error", text is not None and not error, repr(text))
        b.settle()
        if exchanged_ok:
            status, _ = call("GET", base + "/api/v1/users/me", headers=bearer(exchanged["access_token"]))
            check("API: after the deletion the exchanged session's token gets 401", status == 401, f"status {status}")
        b.submit("form#search", {"q": user}, name="users (search for the deleted user)")
        b.wait_for("table#users")
        check("users: the deleted user is no longer found", not b.has(f'tr[data-user-id="{user}"]'))
        b.settle()
        b.get("/admin/audit", "audit (after delete)")
        b.wait_for("table#audit")
        b.settle("audit-after-delete")
        b.get("/admin", "overview (at the end)")
        b.wait_for("#stats")
        b.settle("overview-end")
    except Exception as error:  # a crash is a failed check with a verdict; its message may hold a token: redacted
        if isinstance(error, CheckFailed):
            check(str(error), False, "the run stopped here")
        else:
            ours = [frame for frame in traceback.extract_tb(error.__traceback__) if frame.filename == __file__]
            message = redact(str(error).strip().splitlines()[0] if str(error).strip() else "")[:200]
            check("ran to the end", False, f"{type(error).__name__} at line {ours[-1].lineno if ours else '?'}: {message}")
        if b is not None:
            save_failure(b)
    finally:
        if b is not None:
            try:
                b.console()
            except WebDriverException:
                pass
            b.quit()


def save_failure(b):
    try:
        png, html = os.path.join(b.shots, "failure.png"), os.path.join(b.shots, "failure.html")
        b.driver.save_screenshot(png)
        with open(html, "w", encoding="utf-8") as file:
            file.write(b.driver.page_source)
        print(f"note: the page at the failure ({b.path().split('?')[0]}): {png}, {html}")
    except (WebDriverException, OSError):
        pass


def main():
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument("base_url")
    parser.add_argument("screenshot_dir")
    parser.add_argument("--latchkey", required=True, help="the latchkey executable (for `admin create`)")
    parser.add_argument("--database", required=True, help="the server's database (path or postgres:// URL)")
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    parser.add_argument("--chromedriver", default="/usr/bin/chromedriver")
    parser.add_argument("--driver-log", help="chromedriver's log, warnings and errors only (default: SCREENSHOT_DIR/chromedriver.log)")
    args = parser.parse_args()
    os.makedirs(args.screenshot_dir, exist_ok=True)
    # SIGTERM unwinds like an exception, so `finally` quits chromedriver and chromium rather than orphaning them.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    started = time.monotonic()
    run(args)
    failed = RESULTS.count(False)
    print(f"admin browser: {len(RESULTS) - failed} passed, {failed} failed in {time.monotonic() - started:.1f}s "
          f"(screenshots in {args.screenshot_dir})")
    return 1 if failed or not RESULTS else 0


if __name__ == "__main__":
    sys.exit(main())
