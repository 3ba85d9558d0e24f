extension AdminTemplates {
    /// The pages of an admin's second factor: the code after the password, the enrolment (the server's SVG QR code, `{{{qr}}}`,
    /// and the secret as text), the recovery codes shown once, and the account page.
    static let secondFactorTemplates: [String: String] = [
        "second-step": """
        <h1>Enter your code</h1>
        <p class="muted">Signing in as <strong>{{email}}</strong>: enter the 6-digit code your authenticator app shows, or one of your
        recovery codes.</p>
        <form id="second-step" method="post" action="/admin/sign-in/code" class="card stack">
          <input type="hidden" name="csrf" value="{{csrf}}">
          <label>Code <input type="text" name="code" autocomplete="one-time-code" inputmode="text" maxlength="20" required autofocus></label>
          <button type="submit">Continue</button>
        </form>
        """,
        "enrol": """
        <h1>Set up your authenticator app</h1>
        {{#required}}<p>This console asks every admin for a second factor: set one up to go on.</p>{{/required}}
        <p class="muted">Scan the QR code with an authenticator app (1Password, Google Authenticator, Authy…), or type the key beside it;
        then enter the 6-digit code the app shows.</p>
        <section class="card enrol">
          <figure id="qr">{{{qr}}}</figure>
          <div><p>Key</p><code id="totp-secret" class="secret">{{secret}}</code></div>
        </section>
        <form id="enrol" method="post" action="/admin/account/second-factor" class="card stack">
          <input type="hidden" name="csrf" value="{{csrf}}">
          <label>Code <input type="text" name="code" autocomplete="one-time-code" inputmode="numeric" maxlength="6" required autofocus></label>
          <button type="submit">Confirm</button>
        </form>
        """,
        "recovery-codes": """
        <h1>Your recovery codes</h1>
        <p>Each works once in place of a code, when the authenticator app is not at hand. Keep them somewhere safe: this is the only
        time they are shown.</p>
        <section class="card"><ul id="recovery-codes" class="codes">
        {{#codes}}<li><code>{{.}}</code></li>{{/codes}}
        </ul></section>
        <p><a class="button" href="/admin">Continue to the console</a></p>
        """,
        "account": """
        <h1>Your account</h1>
        <p>Signed in as <strong>{{email}}</strong>.</p>
        <section class="card" id="second-factor">
          <h2>Second factor</h2>
          {{#has_factor}}<p>An authenticator app is set up: every sign-in asks for its code. Lost it? Another admin with a shell runs
          <code>latchkey admin mfa-reset {{email}}</code>.</p>{{/has_factor}}
          {{^has_factor}}<p>No second factor: the password alone signs you in.</p>
          <p><a id="enrol-second-factor" class="button" href="/admin/account/second-factor">Set up an authenticator app</a></p>{{/has_factor}}
        </section>
        """,
    ]
}
