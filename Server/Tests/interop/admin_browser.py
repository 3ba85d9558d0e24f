#!/usr/bin/env python3
"""The admin console (/admin) in a real browser: headless Chromium driven by Selenium, against a live server.

Usage: admin_browser.py BASE_URL SCREENSHOT_DIR --latchkey PATH --database DB
                        [--chromium /usr/bin/chromium] [--chromedriver /usr/bin/chromedriver] [--driver-log PATH]

BASE_URL is the live server (its console enabled: admin.enabled, LATCHKEY_ADMIN_ENABLED=true, on the API's port);
--latchkey and --database are the executable and database the setup link is made with (`latchkey admin create`).
The CLI gets this process's environment: LATCHKEY_MASTER_KEY when the server has one (otherwise the key file beside
the database is used, as by the server), and LATCHKEY_PUBLIC_URL=BASE_URL unless set.

What it does, as an operator would:
  1. `latchkey admin create --role owner` -> a setup link; opens it, sets a password, and is held at the enrolment of a
     second factor (admin.require-mfa): /admin redirects there; the page shows the key's QR code as an inline <svg>
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
     API then refuses the session the access code was exchanged for, and form#search no longer finds the user;
  8. through the API: a device user who adds an address and password (verified with the mailed code, read from the
     SMTP peer) and signs in with them; a second address left unverified; a third the SMTP peer refuses (550, set
     through its PUT /behaviours), so its verification mail fails for good;
  9. `latchkey admin create --role support` and `--role viewer`, each through its setup link and enrolment (the
     browser then switches between the three console sessions by their cookies);
 10. support finds the user by its address (its row says "1 device"), sends a password reset from its page and resends
     the unverified address's verification mail (buttons found by their labels; a confirmation step is followed when
     there is one): both mails reach the SMTP peer;
 11. the outbox (/admin/outbox, from nav#nav): recipient, purpose, state, attempts and last error columns; the helped
     user's mails sent, the refused one failed (1 attempt, the 550 as its last error) with the only "Retry" button;
     with the peer taking the address again (slowly: 5 s), Retry makes it pending, the peer receives it, it is sent;
 12. "Disable user" (and its confirmation, if any): the user's access tokens get 401 invalid_token, refresh, password
     and device sign-ins 403 user_disabled; "Enable user": the password signs in again, the ended session stays ended;
 13. the viewer sees the user and the outbox with no POST form but sign-out; its forged POSTs (with its own valid CSRF
     token) of Disable user, revoke-all and Retry answer 403 with the console's page and change nothing;
 14. the owner issues an access code; support sees no form#rotate-key, and its forged POSTs to rotate the key, issue
     or revoke an access code, delete the user, and its GET of the delete confirmation, answer 403 with the console's
     page, changing nothing (the code still works, the keys are as many); the owner then rotates the key (one more);
     the audit log lists user.disable and user.enable; the webhooks and account pages;
 15. unknown paths under /admin (GET and POST), signed in and signed out, answer 404 with the console's HTML page.
Every page is loaded in a 1280x900 viewport, saved as a full-page PNG in SCREENSHOT_DIR (each path is printed), and
checked for browser console errors (SEVERE entries of the `browser` log): any fails the run. Each screenshotted page
is also laid out 390 px wide (a phone): it must not scroll sideways (document.documentElement.scrollWidth <=
innerWidth) and is saved again as NN-name-390.png. On every page a count of one is singular ("1 device", never
"1 devices"). On a crash the page it was on is saved as failure.png / failure.html there. chromedriver's log goes to
--driver-log (default SCREENSHOT_DIR/chromedriver.log). The browser is always quit, also on a failure, an exception or SIGTERM.

The live server mails through Server/Tests/interop/smtp_peer.py, whose ready JSON is in LATCHKEY_TEST_SMTP_PEER
(scripts/test sets both up).

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
PHONE = (390, 844)  # an iPhone's viewport in CSS pixels: no console page may scroll sideways there
# A count of one with a plural noun ("1 devices"): wrong on any page.
ONE_PLURAL = re.compile(r"(?<![\d.,])1 (devices|sessions|users|codes|access codes|mails|attempts|keys|passkeys|events|"
                        r"identities|factors|admins|deliveries)\b", re.IGNORECASE)


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


def error_code(body):
    """The error envelope's code, or None."""
    error = body.get("error") if isinstance(body, dict) else None
    return error.get("code") if isinstance(error, dict) else None


def console_request(base, path, cookie=None, fields=None):
    """A plain HTTP GET (or, with `fields`, a form POST) to the console, as a forger would send it: (status,
    Content-Type, body text). Redirects are answers, not followed."""
    headers = {"Cookie": cookie} if cookie else {}
    data = None
    if fields is not None:
        data = urllib.parse.urlencode(fields).encode()
        headers["Content-Type"] = "application/x-www-form-urlencoded"
    method = "POST" if data is not None else "GET"
    request = urllib.request.Request(base + path, data=data, headers=headers, method=method)
    opener = urllib.request.build_opener(NoRedirect)
    try:
        with opener.open(request, timeout=TIMEOUT) as response:
            return response.status, response.headers.get("Content-Type", ""), response.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as error:
        return error.code, error.headers.get("Content-Type", ""), error.read().decode("utf-8", "replace")


def is_console_page(kind, body):
    """Whether an answer is one of the console's HTML pages (its layout: the stylesheet, an h1), not API JSON."""
    return kind.startswith("text/html") and "/admin/static/admin.css" in body and "<h1" in body


class SMTPPeer:
    """Server/Tests/interop/smtp_peer.py, the live server's mail relay, through its HTTP API (LATCHKEY_TEST_SMTP_PEER,
    its ready JSON, as scripts/test exports it)."""

    def __init__(self):
        ready = json.loads(os.environ.get("LATCHKEY_TEST_SMTP_PEER") or "{}")
        self.http = ready.get("http")

    def messages(self, to, wait=0.0, at_least=1):
        """The mails the peer stored for `to`, oldest first; with `wait`, until there are `at_least` or time is up."""
        deadline = time.monotonic() + wait
        while True:
            query = urllib.parse.urlencode({"to": to, "wait": f"{max(0.0, min(5.0, deadline - time.monotonic())):.1f}"})
            status, found = interop_checks.call("GET", f"{self.http}/messages?{query}", timeout=TIMEOUT)
            found = found if status == 200 and isinstance(found, list) else []
            if len(found) >= at_least or time.monotonic() >= deadline:
                return found
            time.sleep(0.2)

    def behave(self, to, behaviour):
        """From now on mail to `to` is refused (`refuse`), answered slowly (`slow`), or accepted (`accept`)."""
        query = urllib.parse.urlencode({"to": to, "behaviour": behaviour})
        status, _ = interop_checks.call("PUT", f"{self.http}/behaviours?{query}", timeout=TIMEOUT)
        require(f"SMTP peer: mail to a test address is now `{behaviour}`", status == 200, f"status {status}")

    def code(self, to):
        """The six-digit code on a line of its own in the first mail to `to` (waiting up to WAIT seconds)."""
        import email
        import email.policy
        found = self.messages(to, wait=WAIT)
        require("SMTP peer: the verification mail arrived", bool(found))
        message = email.message_from_string(found[0]["raw"], policy=email.policy.default)
        part = message.get_body(preferencelist=("plain",))
        lines = (part.get_content() if part is not None else "").splitlines()
        codes = [line.strip() for line in lines if re.fullmatch(r"\d{6}", line.strip())]
        require("SMTP peer: the verification mail has a six-digit code", bool(codes))
        return codes[0]


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
        self.viewport(*WINDOW)
        self.driver.set_page_load_timeout(WAIT * 2)
        self.wait = WebDriverWait(self.driver, WAIT)

    def quit(self):
        self.driver.quit()

    def viewport(self, width, height):
        """The page's viewport width x height CSS pixels (scale 1); the page is laid out again, not reloaded."""
        self.driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                                    {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})
        self.width = width

    # Console accounts ---------------------------------------------------------------------------------
    def signed_in_as(self, cookies):
        """Switches the browser to another admin's console session (cookies kept from its sign-in), or none."""
        self.driver.delete_all_cookies()
        for cookie in cookies or ():
            kept = ("name", "value", "path", "secure", "httpOnly", "expiry", "sameSite")
            self.driver.add_cookie({k: v for k, v in cookie.items() if k in kept})

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
        """The whole page (not only the window's height) as SCREENSHOT_DIR/NN-name.png; prints the path."""
        self.shot_count += 1
        path = os.path.join(self.shots, f"{self.shot_count:02d}-{name}.png")
        metrics = self.driver.execute_cdp_cmd("Page.getLayoutMetrics", {})
        size = metrics.get("cssContentSize") or metrics["contentSize"]
        width, height = max(int(size["width"]), self.width), max(int(size["height"]), 1)
        shot = self.driver.execute_cdp_cmd("Page.captureScreenshot", {
            "format": "png", "captureBeyondViewport": True,
            "clip": {"x": 0, "y": 0, "width": width, "height": height, "scale": 1}})
        with open(path, "wb") as file:
            file.write(base64.b64decode(shot["data"]))
        check(f"{self.page}: full-page screenshot {path} ({width}x{height})", os.path.getsize(path) > 0)

    def settle(self, shot=None):
        """The end of a page: its wording, its screenshot (when named) at 1280 px and at 390 px with no sideways
        scrolling there, and its console checked."""
        self.check_wording()
        if shot:
            self.screenshot(shot)
            self.at_phone_width(shot)
        self.console()

    def at_phone_width(self, shot):
        """The page at 390 px wide: nothing wider than the viewport (document.documentElement.scrollWidth <=
        innerWidth; a wide table scrolls inside its own box), a screenshot NN-shot-390.png; then 1280 px again."""
        self.viewport(*PHONE)
        try:
            self.wait.until(lambda d: d.execute_script("return window.innerWidth") == PHONE[0])
            scroll, inner = self.driver.execute_script(
                "return [document.documentElement.scrollWidth, window.innerWidth]")
            wide = [] if scroll <= inner else self.driver.execute_script("""
                var limit = window.innerWidth;
                return Array.from(document.querySelectorAll('body *')).filter(function (e) {
                    var r = e.getBoundingClientRect(); return r.right > limit + 0.5 && r.width > 0;
                }).filter(function (e, _, all) { return !all.some(function (o) { return o !== e && o.contains(e); }); })
                  .slice(0, 5).map(function (e) {
                    var name = e.tagName.toLowerCase() + (e.id ? '#' + e.id : '');
                    if (typeof e.className === 'string' && e.className.trim()) {
                        name += '.' + e.className.trim().split(/\s+/).join('.');
                    }
                    return name + ' ' + Math.round(e.getBoundingClientRect().right) + 'px';
                  });""")
            check(f"{self.page}: no horizontal scrolling at {PHONE[0]} px (scrollWidth {scroll} <= innerWidth {inner})",
                  scroll <= inner and inner == PHONE[0], f"wider: {wide}" if wide else "")
            self.screenshot(f"{shot}-{PHONE[0]}")
        finally:
            self.viewport(*WINDOW)
            self.wait.until(lambda d: d.execute_script("return window.innerWidth") == WINDOW[0])

    def check_wording(self):
        """A count of one takes the singular ("1 device"), on every page."""
        text = self.driver.execute_script("return document.body ? document.body.innerText : ''") or ""
        wrong = sorted({m.group(0) for m in ONE_PLURAL.finditer(text)})
        if wrong:
            check(f"{self.page}: one thing is singular (\"1 device\")", False, f"found {wrong}")

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
        missing = [p for p in ("/admin", "/admin/users", "/admin/access-codes", "/admin/keys", "/admin/audit",
                               "/admin/outbox", "/admin/admins") if p not in hrefs]
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

    def csrf(self):
        """The console session's CSRF token, as a form on the page carries it (form#logout has one)."""
        fields = self.find_all("input[type=hidden][name=csrf]")
        return fields[0].get_attribute("value") if fields else ""

    def buttons(self, label, within=None):
        """The submit buttons whose text matches the regular expression `label` (case-insensitive), in page order."""
        pattern = re.compile(label, re.IGNORECASE)
        found = self.find_all("button, input[type=submit]", within)
        return [e for e in found if pattern.search((e.text or e.get_attribute("value") or "").strip())]

    def post_forms(self):
        """The page's POST forms other than form#logout (the sign-out every signed-in page has): its actions."""
        return self.driver.execute_script("""
            return Array.from(document.querySelectorAll('form')).filter(function (form) {
                return (form.getAttribute('method') || 'get').toLowerCase() === 'post' && form.id !== 'logout';
            }).map(function (form) { return form.getAttribute('action') || ''; });""")

    def rows(self, text, css="table tr"):
        """The table rows whose text holds `text` (case-insensitive)."""
        return [row for row in self.find_all(css) if text.lower() in row.text.lower()]


def redact(text):
    """A browser message without anything token-like (setup tokens, JWTs) in it."""
    text = re.sub(r"token=[^&\s\"']+", "token=…", text)
    return re.sub(r"eyJ[\w-]+\.[\w-]+\.[\w-]+", "<jwt>", text)


# --- the run ---------------------------------------------------------------------------------------------

def admin_setup_link(args, base, email, role):
    env = dict(os.environ)
    env.setdefault("LATCHKEY_PUBLIC_URL", base)
    done = subprocess.run([args.latchkey, "admin", "create", email, "--role", role, "--database", args.database],
                          env=env, capture_output=True, text=True, timeout=120)
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    require(f"`latchkey admin create --role {role}` exits 0 and prints one line",
            done.returncode == 0 and len(lines) == 1,
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


def enrol_admin(b, args, base, role):
    """A console account of `role` made with `latchkey admin create --role`, through its setup link and enrolment:
    (email, password, the signed-in session's cookies). The browser is left signed in as it."""
    email = f"{role}-{uuid.uuid4().hex[:8]}@example.com"
    setup = admin_setup_link(args, base, email, role)
    password = "Lk-" + secrets.token_urlsafe(24)
    b.signed_in_as(None)
    b.get(setup, f"setup page ({role})")
    b.submit("form#setup", {"password": password, "password_confirm": password}, name=f"enrolment ({role})")
    b.wait_for("form#enrol", f"form#enrol after the {role}'s password")
    secret = b.text("code#totp-secret").strip()
    b.settle()
    b.submit("form#enrol", {"code": totp(secret, time.time())}, name=f"recovery codes ({role})")
    b.wait_for("ul#recovery-codes", f"ul#recovery-codes after the {role}'s code")
    b.settle()
    b.click_to(b.find('a[href="/admin"].button'), f"overview ({role})")
    b.wait_for("nav#nav", f"nav#nav for the {role}")
    require(f"{role}: the setup link and the enrolment sign in, on /admin", b.path() == "/admin", b.path())
    b.check_signed_in_page()
    b.settle()
    return email, password, b.driver.get_cookies()


def outbox_table(b):
    """The outbox page's table of mails: the first table with a Recipient column (required)."""
    b.wait_for("table")
    tables = [t for t in b.find_all("table") if any("recipient" in th.text.lower() for th in b.find_all("th", t))]
    require(f"{b.page}: a table with a Recipient column", tables)
    return tables[0]


def column(b, table, heading):
    """The 0-based index of the first column of `table` whose heading holds `heading`, or None."""
    headings = [th.text.strip().lower() for th in b.find_all("thead th, tr:first-child th", table)]
    return next((i for i, text in enumerate(headings) if heading in text), None)


def cell(row, index):
    cells = row.find_elements(By.CSS_SELECTOR, "td, th")
    return cells[index].text.strip().lower() if index is not None and index < len(cells) else ""


def press(b, label, name, what):
    """Presses the button labelled `label` (a regular expression) and, when a confirmation page follows (a page with
    no .flash and a button of the same label), confirms there: the action's form's path (the one that POSTs)."""
    found = b.buttons(label)
    require(f"{b.page}: a button {what}", found, f"buttons: {[e.text for e in b.buttons('.')][:12]}")
    form = found[0].find_element(By.XPATH, "./ancestor::form")
    action = urllib.parse.urlsplit(form.get_attribute("action") or "").path
    b.click_to(found[0], name, what=f"pressing {what}")
    text, _ = b.flash()
    again = b.buttons(label)
    if text is None and again:  # a confirmation step
        form = again[0].find_element(By.XPATH, "./ancestor::form")
        action = urllib.parse.urlsplit(form.get_attribute("action") or "").path
        b.settle(f"confirm-{re.sub(r'[^a-z]+', '-', what.lower()).strip('-')}")
        b.click_to(again[0], name, what=f"confirming {what}")
    return action


def refused_by_role(base, b, role, what, path, fields):
    """A forged POST of an action outside `role`, with the admin's valid CSRF token: 403 with the console's page."""
    status, kind, body = console_request(base, path, b.cookie_header(), {"csrf": b.csrf(), **fields})
    check(f"{role}: a forged POST to {what} with a valid CSRF token answers 403 with the console's page",
          status == 403 and is_console_page(kind, body), f"POST {path}: {status} {kind}")


def support_day(b, args, base, owner_password):
    """Steps 8-15: support's day (disable, resend, reset, the outbox and a retry), each role's refusals, the console's
    404 page."""
    peer = SMTPPeer()
    require("LATCHKEY_TEST_SMTP_PEER names the SMTP peer the live server mails through", bool(peer.http))
    owner = b.driver.get_cookies()

    # 8. Users through the API: a device user with a verified address and password; a second address never verified;
    # a third the relay refuses (550), so its mail fails for good.
    tag = uuid.uuid4().hex[:10]
    address, unverified, bounced = (f"{who}-{tag}@example.test" for who in ("helped", "resend", "bounce"))
    app_password = "Lk-user-" + secrets.token_urlsafe(12)
    device = str(uuid.uuid4())
    status, pair = call("POST", base + "/api/v1/auth/register-device", json_body={"device_id": device})
    require("API: register-device 201 with a token pair and a device secret", status == 201 and isinstance(pair, dict)
            and all(k in pair for k in ("access_token", "refresh_token", "user_id", "device_secret")), f"status {status}")
    user = pair["user_id"]
    status, body = call("POST", base + "/api/v1/auth/register", headers=bearer(pair["access_token"]),
                        json_body={"email": address, "password": app_password})
    require("API: the device user adds an address and a password (201)", status == 201, f"status {status} {error_code(body)}")
    status, body = call("POST", base + "/api/v1/auth/verify-email", json_body={"email": address, "code": peer.code(address)})
    require("API: the address is verified with the mailed code (200)", status == 200, f"status {status} {error_code(body)}")
    status, signed = call("POST", base + "/api/v1/auth/login", json_body={"email": address, "password": app_password})
    require("API: the address and password sign in (200)", status == 200 and isinstance(signed, dict)
            and "access_token" in signed, f"status {status} {error_code(signed)}")
    status, body = call("POST", base + "/api/v1/auth/register", json_body={"email": unverified, "password": app_password})
    require("API: a second address registers, not verified (201)", status == 201 and isinstance(body, dict)
            and body.get("user_id"), f"status {status} {error_code(body)}")
    unverified_user = body["user_id"]
    peer.behave(bounced, "refuse")
    status, body = call("POST", base + "/api/v1/auth/register", json_body={"email": bounced, "password": app_password})
    require("API: a third address registers (201): its verification mail is refused by the relay", status == 201,
            f"status {status} {error_code(body)}")

    # 9. A support account and a viewer, each through its setup link.
    _, support_password, support = enrol_admin(b, args, base, "support")
    _, _, viewer = enrol_admin(b, args, base, "viewer")

    # 10. Support: find the user by address, send a password reset; the unverified address's mail again.
    b.signed_in_as(support)
    b.get("/admin/users", "users (support)")
    b.submit("form#search", {"q": address}, name="users (search by address)")
    row = b.wait_for(f'table#users tr[data-user-id="{user}"]', "the user's row in table#users (search by address)")
    check("users: the search by email address finds the user", True)
    check('users: the user\'s row says "1 device"', re.search(r"(?<![\d.,])1 device\b(?!s)", row.text) is not None,
          repr(row.text)[:160])
    b.settle("users-support")
    b.click_to(b.find(f'a[href="/admin/users/{user}"]', row), "user (support)")
    b.wait_for("h1")
    check("user: the page shows the user's address", address in b.find("body").text)
    check('user: a "Disable user" button', bool(b.buttons(r"^\s*disable user\s*$")))
    b.check_signed_in_page()
    b.settle("user-support")
    mails = len(peer.messages(address))
    press(b, r"password reset|reset password|reset link", "user (password reset sent)", "to send a password reset")
    text, error = b.flash()
    check("password reset: a .flash, not an error", text is not None and not error, repr(text))
    b.settle()
    check("SMTP peer: the password reset mail reached the address",
          len(peer.messages(address, wait=WAIT, at_least=mails + 1)) > mails)

    b.get(f"/admin/users/{unverified_user}", "user (unverified address)")
    b.wait_for("h1")
    b.settle("user-unverified")
    mails = len(peer.messages(unverified))
    press(b, r"resend|verification mail", "user (verification mail sent)", "to resend the verification mail")
    text, error = b.flash()
    check("resend verification: a .flash, not an error", text is not None and not error, repr(text))
    b.settle()
    check("SMTP peer: the new verification mail reached the unverified address",
          len(peer.messages(unverified, wait=WAIT, at_least=mails + 1)) > mails)

    # 11. The outbox: each mail's recipient, purpose, state, attempts and last error; Retry for the failed one.
    b.get(f"/admin/users/{user}", "user (support)")
    links = b.find_all("nav#nav a[href$='/admin/outbox']")
    require("nav#nav links to /admin/outbox", links)
    b.click_to(links[0], "outbox")
    table = outbox_table(b)
    headings = [th.text.strip().lower() for th in b.find_all("thead th, tr:first-child th", table)]
    check("outbox: columns recipient, purpose, state, attempts, last error",
          all(any(name in h for h in headings) for name in ("recipient", "purpose", "state", "attempts", "last error")),
          f"headings {headings}")
    state, attempts, error_column = (column(b, table, name) for name in ("state", "attempts", "last error"))

    def mails(to):
        return b.rows(to, "tbody tr") or b.rows(to, "tr")

    def bounced_row(wanted):
        """The refused address's row once the reloaded outbox shows it in state `wanted`, else None."""
        b.get("/admin/outbox", "outbox")
        outbox_table(b)
        return next((r for r in mails(bounced) if cell(r, state).startswith(wanted)), None)

    row = interop_checks.poll(lambda: bounced_row("failed"), WAIT, 0.5)
    require("outbox: the refused mail is listed as failed", row is not None,
            f"rows: {[r.text[:120] for r in mails(bounced)]}")
    check("outbox: the failed mail: purpose verification, 1 attempt, the relay's refusal as its last error",
          "verif" in row.text.lower() and re.match(r"1\b", cell(row, attempts)) is not None
          and any(word in cell(row, error_column) for word in ("550", "refused")), repr(row.text)[:200])
    ours = mails(address)
    check("outbox: the helped user's mails (verification, reset) are listed as sent",
          len(ours) >= 2 and all(cell(r, state).startswith("sent") for r in ours)
          and any("reset" in r.text.lower() for r in ours), f"rows: {[r.text[:100] for r in ours]}")
    check("outbox: the unverified address's two verification mails are sent",
          len(mails(unverified)) >= 2 and all(cell(r, state).startswith("sent") for r in mails(unverified)))
    check("outbox: only the failed mail has a Retry button",
          all(not b.buttons(r"^\s*retry\s*$", r) for r in ours + mails(unverified)))
    retry = b.buttons(r"^\s*retry\s*$", row)
    require("outbox: the failed mail has a Retry button", retry)
    retry_path = urllib.parse.urlsplit(retry[0].find_element(By.XPATH, "./ancestor::form").get_attribute("action") or "").path
    b.check_signed_in_page()
    b.settle("outbox")
    # The relay takes the address now, answering after --slow-seconds (5): the mail is pending while it is tried.
    peer.behave(bounced, "slow")
    b.click_to(retry[0], "outbox (retried)", what="pressing Retry")
    text, error = b.flash()
    check("retry: a .flash, not an error", text is not None and not error, repr(text))
    outbox_table(b)
    rows = mails(bounced)
    check("outbox: after Retry the mail's state is pending again", rows and cell(rows[0], state).startswith("pending"),
          f"state {cell(rows[0], state) if rows else 'no row'}")
    b.settle("outbox-retried")
    check("SMTP peer: the retried mail is delivered", bool(peer.messages(bounced, wait=WAIT)))
    check("outbox: the retried mail is then sent", interop_checks.poll(lambda: bounced_row("sent"), WAIT, 0.5) is not None)
    b.settle()

    # 12. Support disables the user: the API refuses its token and every sign-in; enabling lets it sign in again.
    b.get(f"/admin/users/{user}", "user (support)")
    b.wait_for("h1")
    disable_path = press(b, r"^\s*disable user\s*$", "user (disabled)", '"Disable user"')
    text, error = b.flash()
    check("disable: a .flash, not an error", text is not None and not error, repr(text))
    check("user: the page says the user is disabled", "disabled" in b.find("body").text.lower())
    check('user: an "Enable user" button instead of "Disable user"',
          bool(b.buttons(r"^\s*enable user\s*$")) and not b.buttons(r"^\s*disable user\s*$"))
    b.settle("user-disabled")
    for name, token in (("device session's", pair["access_token"]), ("password session's", signed["access_token"])):
        status, body = call("GET", base + "/api/v1/users/me", headers=bearer(token))
        check(f"API: after Disable user the {name} access token gets 401 invalid_token",
              status == 401 and error_code(body) == "invalid_token", f"status {status} {error_code(body)}")
    status, body = call("POST", base + "/api/v1/auth/refresh", json_body={"refresh_token": signed["refresh_token"]})
    check("API: a disabled user's refresh gets 403 user_disabled", status == 403 and error_code(body) == "user_disabled",
          f"status {status} {error_code(body)}")
    status, body = call("POST", base + "/api/v1/auth/login", json_body={"email": address, "password": app_password})
    check("API: a disabled user's password sign-in gets 403 user_disabled",
          status == 403 and error_code(body) == "user_disabled", f"status {status} {error_code(body)}")
    status, body = call("POST", base + "/api/v1/auth/register-device",
                        json_body={"device_id": device, "device_secret": pair["device_secret"]})
    check("API: a disabled user's device sign-in gets 403 user_disabled",
          status == 403 and error_code(body) == "user_disabled", f"status {status} {error_code(body)}")
    press(b, r"^\s*enable user\s*$", "user (enabled)", '"Enable user"')
    text, error = b.flash()
    check("enable: a .flash, not an error", text is not None and not error, repr(text))
    check('user: "Disable user" again', bool(b.buttons(r"^\s*disable user\s*$")))
    b.settle()
    status, signed = call("POST", base + "/api/v1/auth/login", json_body={"email": address, "password": app_password})
    require("API: enabled, the password signs in again (200)", status == 200 and isinstance(signed, dict)
            and "access_token" in signed, f"status {status} {error_code(signed)}")
    status, _ = call("POST", base + "/api/v1/auth/refresh", json_body={"refresh_token": pair["refresh_token"]})
    check("API: enabling does not revive an ended session (its refresh token gets 401)", status == 401, f"status {status}")

    def still_signed_in(after):
        status, _ = call("GET", base + "/api/v1/users/me", headers=bearer(signed["access_token"]))
        check(f"... and nothing changed: the user's session still works after {after}", status == 200, f"status {status}")

    # 13. The viewer reads but does nothing.
    b.signed_in_as(viewer)
    b.get(f"/admin/users/{user}", "user (viewer)")
    b.wait_for("h1")
    forms = b.post_forms()
    check("viewer: the user page has no action (no POST form but sign-out)", not forms, f"forms: {forms}")
    check('viewer: no "Disable user" button', not b.buttons(r"disable user"))
    b.check_signed_in_page()
    b.settle("user-viewer")
    refused_by_role(base, b, "viewer", '"Disable user"', disable_path, {})
    still_signed_in("the viewer's Disable user")
    refused_by_role(base, b, "viewer", "revoke all sessions", f"/admin/users/{user}/sessions/revoke-all", {})
    still_signed_in("the viewer's revoke-all")
    b.get("/admin/outbox", "outbox (viewer)")
    outbox_table(b)
    check("viewer: the outbox shows no Retry and no other action", not b.buttons(r"retry") and not b.post_forms(),
          f"forms: {b.post_forms()}")
    b.settle("outbox-viewer")
    refused_by_role(base, b, "viewer", "Retry", retry_path, {})

    # 14. The owner issues an access code; support can neither revoke it, nor issue one, nor rotate keys, nor delete.
    b.signed_in_as(owner)
    b.get(f"/admin/users/{user}", "user (owner)")
    b.submit("form#issue-code", {"expires_in": "1d", "note": "admin_browser.py roles", "password": owner_password},
             name="issued code (owner)")
    code = (b.wait_for("#issued-code").text or "").strip()
    jti = jwt_claims(code).get("jti")
    require("owner: issues an access code (#issued-code)", code.count(".") == 2 and jti, f"{len(code)} characters")
    b.settle()
    b.get("/admin/keys", "keys (owner)")
    keys = len(b.find_all("table#keys tbody tr"))
    b.settle()

    b.signed_in_as(support)
    b.get("/admin/keys", "keys (support)")
    b.wait_for("table#keys")
    check("support: the keys page offers no form#rotate-key", not b.has("form#rotate-key"))
    b.settle("keys-support")
    refused_by_role(base, b, "support", "rotate the signing key", "/admin/keys/rotate", {"password": support_password})
    refused_by_role(base, b, "support", "issue an access code", f"/admin/users/{user}/access-codes",
                    {"expires_in": "1d", "note": "forged", "password": support_password})
    refused_by_role(base, b, "support", "revoke an access code", f"/admin/access-codes/{jti}/revoke", {})
    status, me = call("GET", base + "/api/v1/users/me", headers=bearer(code))
    check("... and nothing changed: the owner's access code still works", status == 200, f"status {status}")
    refused_by_role(base, b, "support", "delete the user", f"/admin/users/{user}/delete", {"password": support_password})
    still_signed_in("support's delete")
    status, kind, body = console_request(base, f"/admin/users/{user}/delete", b.cookie_header())
    check("support: the delete confirmation (owner's) answers 403 with the console's page",
          status == 403 and is_console_page(kind, body), f"status {status}")
    b.get(f"/admin/users/{user}/delete", "not allowed (support)", allow_status=(403,))
    check("not allowed: the page has an h1 and no form#confirm-delete", b.has("h1") and not b.has("form#confirm-delete"))
    b.settle("not-allowed")
    b.get("/admin/access-codes", "access codes (support)")
    check("support: no revoke-code form on the access codes page", not b.has("form.revoke-code"))
    b.settle()

    b.signed_in_as(owner)
    b.get("/admin/keys", "keys (owner)")
    check("... and nothing changed: the keys are as before support's forged rotation",
          len(b.find_all("table#keys tbody tr")) == keys, f"{len(b.find_all('table#keys tbody tr'))} rows, {keys} before")
    b.submit("form#rotate-key", {"password": owner_password}, name="keys (rotated by the owner)")
    text, error = b.flash()
    check("owner: rotating the key is done (a .flash, not an error)", text is not None and not error, repr(text))
    check("owner: table#keys has one key more", len(b.find_all("table#keys tbody tr")) == keys + 1,
          f"{len(b.find_all('table#keys tbody tr'))} rows, {keys} before")
    b.settle()

    # 15. Console accounts: the owner adds one (its setup link once) and changes its role; support reads, cannot change.
    b.get("/admin/admins", "console accounts (owner)")
    rows = len(b.find_all("table#admins tbody tr"))
    check("console accounts: table#admins lists the accounts", rows >= 3, f"{rows} rows")
    b.wait_for("form#add-admin")
    b.driver.execute_script("document.querySelector('form#add-admin select[name=role]').value = 'viewer';")
    b.submit("form#add-admin", {"email": "dora@example.com", "password": owner_password}, name="console account added")
    link = (b.wait_for("#setup-link").text or "").strip()
    check("owner: adding an account shows its setup link once (#setup-link)", "/admin/setup?token=" in link,
          f"{len(link)} characters")
    b.settle()
    b.get("/admin/admins", "console accounts (owner)")
    check("console accounts: one row more", len(b.find_all("table#admins tbody tr")) == rows + 1,
          f"{len(b.find_all('table#admins tbody tr'))} rows, {rows} before")
    check("console accounts: the setup link is not on the list", link.split("token=")[-1] not in b.driver.page_source)
    dora = ""
    for row in b.find_all("table#admins tbody tr"):
        if "dora@example.com" in row.text:
            dora = row.get_attribute("data-admin-id") or ""
    b.check_signed_in_page()
    b.settle("admins")
    b.signed_in_as(support)
    b.get("/admin/admins", "console accounts (support)")
    check("support: the accounts are listed, with no form", b.has("table#admins") and not b.post_forms(),
          f"forms: {b.post_forms()}")
    b.settle("admins-support")
    refused_by_role(base, b, "support", "make an account owner", f"/admin/admins/{dora}/role",
                    {"role": "owner", "password": support_password})
    refused_by_role(base, b, "support", "add a console account", "/admin/admins",
                    {"email": "eve@example.com", "role": "owner", "password": support_password})
    b.signed_in_as(owner)
    b.get("/admin/admins", "console accounts (owner)")
    check("... and nothing changed: dora is still a viewer and no eve",
          "eve@example.com" not in b.find("table#admins").text
          and any("dora@example.com" in r.text and "viewer" in r.text for r in b.find_all("table#admins tbody tr")))
    b.settle()

    b.get("/admin/audit", "audit (roles)")
    audit = b.wait_for("table#audit").text
    for action in ("user.disable", "user.enable", "admin.create"):
        check(f"audit: table#audit lists {action}", action in audit)
    b.settle()
    for path, name in (("/admin/webhooks", "webhooks"), ("/admin/account", "account")):
        b.get(path, name)
        b.wait_for("h1")
        b.settle(name)

    # 15. Unknown paths under /admin: the console's own 404 page, signed in or not.
    unknown = ("/admin/no-such-page", f"/admin/users/{user}/no-such-tab", "/admin/outbox/no-such-mail/x")
    for path in unknown:
        status, kind, body = console_request(base, path, b.cookie_header())
        check(f"signed in: GET {path} answers 404 with the console's page", status == 404 and is_console_page(kind, body),
              f"status {status} {kind}")
    status, kind, body = console_request(base, "/admin/no-such-action", b.cookie_header(), {"csrf": b.csrf()})
    check("signed in: POST /admin/no-such-action answers 404 with the console's page",
          status == 404 and is_console_page(kind, body), f"status {status} {kind}")
    b.get(unknown[0], "not found (signed in)", allow_status=(404,))
    check("not found: the page has an h1 and a link back into the console", b.has("h1") and b.has('main a[href^="/admin"], a[href="/admin"]'))
    b.settle("not-found")
    b.signed_in_as(None)
    for path in unknown:
        status, kind, body = console_request(base, path)
        check(f"signed out: GET {path} answers 404 with the console's page", status == 404 and is_console_page(kind, body),
              f"status {status} {kind}")
    status, kind, body = console_request(base, "/admin/no-such-action", fields={})
    check("signed out: POST /admin/no-such-action answers 404 with the console's page",
          status == 404 and is_console_page(kind, body), f"status {status} {kind}")
    b.get(unknown[0], "not found (signed out)", allow_status=(404,))
    check("not found (signed out): the page has an h1 and no nav#nav", b.has("h1") and not b.has("nav#nav"))
    b.settle("not-found-signed-out")
    b.get("/admin/login", "login page (at the end)")
    b.wait_for("form#login")
    b.settle()


def run(args):
    base = args.base_url.rstrip("/")
    b = None
    try:
        email = f"admin-{uuid.uuid4().hex[:8]}@example.com"
        setup = admin_setup_link(args, base, email, "owner")
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

        # 8-15. Support's day, the roles, the console's 404 page.
        support_day(b, args, base, password)
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
