import Mustache

/// The console's templates (Mustache, HTML-escaping every `{{value}}`) and stylesheet. No script anywhere: the pages
/// work without JavaScript and the Content-Security-Policy allows none.
enum AdminTemplates {
    static let library: MustacheLibrary = {
        var library = MustacheLibrary()
        for (name, text) in Self.templates.merging(Self.secondFactorTemplates, uniquingKeysWith: { first, _ in first })
            .merging(Self.webhookTemplates, uniquingKeysWith: { first, _ in first })
            .merging(Self.supportTemplates, uniquingKeysWith: { first, _ in first })
            .merging(Self.accountTemplates, uniquingKeysWith: { first, _ in first })
        {
            // The templates are part of the binary and parsed at first use; a broken one is a programming error.
            try! library.register(text, named: name)
        }
        return library
    }()

    static let templates: [String: String] = [
        "layout": """
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
        <title>{{title}} · Latchkey admin</title>
        <link rel="stylesheet" href="/admin/static/admin.css"><link rel="icon" href="/admin/static/favicon.svg" type="image/svg+xml">
        </head><body>
        {{#admin}}
        <header class="top">
          <a class="brand" href="/admin"><span class="mark">◆</span> Latchkey</a>
          {{#signed_in}}<nav id="nav">
            <a href="/admin"{{#nav_overview}} class="active"{{/nav_overview}}>Overview</a>
            <a href="/admin/users"{{#nav_users}} class="active"{{/nav_users}}>Users</a>
            <a href="/admin/access-codes"{{#nav_codes}} class="active"{{/nav_codes}}>Access codes</a>
            <a href="/admin/keys"{{#nav_keys}} class="active"{{/nav_keys}}>Signing keys</a>
            <a href="/admin/webhooks"{{#nav_webhooks}} class="active"{{/nav_webhooks}}>Webhooks</a>
            <a href="/admin/outbox"{{#nav_outbox}} class="active"{{/nav_outbox}}>Outbox</a>
            <a href="/admin/audit"{{#nav_audit}} class="active"{{/nav_audit}}>Audit log</a>
            <a href="/admin/admins"{{#nav_admins}} class="active"{{/nav_admins}}>Console accounts</a>
          </nav>{{/signed_in}}{{^signed_in}}<span class="spacer"></span>{{/signed_in}}
          <form id="logout" method="post" action="/admin/logout"><input type="hidden" name="csrf" value="{{csrf}}">
            {{#signed_in}}<a class="who" href="/admin/account">{{email}}</a> <span class="role" id="admin-role">{{role}}</span>{{/signed_in}}{{^signed_in}}<span class="who">{{email}}</span>{{/signed_in}}
            <button type="submit" class="quiet">Sign out</button></form>
        </header>
        {{/admin}}
        <main{{^admin}} class="narrow"{{/admin}}>
        {{#flash}}<div class="flash {{kind}}" role="status">{{text}}</div>{{/flash}}
        {{{body}}}
        </main>
        </body></html>
        """,
        "login": """
        <h1>Sign in</h1>
        <p class="muted">Latchkey admin console</p>
        <form id="login" method="post" action="/admin/login" class="card stack">
          <input type="hidden" name="csrf" value="{{csrf}}">
          <label>Email <input type="email" name="email" value="{{email}}" autocomplete="username" required autofocus></label>
          <label>Password <input type="password" name="password" autocomplete="current-password" required></label>
          <button type="submit">Sign in</button>
        </form>
        """,
        "setup": """
        <h1>Set your password</h1>
        <p class="muted">Admin account <strong>{{email}}</strong>. At least 8 characters, not a common password.</p>
        <form id="setup" method="post" action="/admin/setup" class="card stack">
          <input type="hidden" name="csrf" value="{{csrf}}"><input type="hidden" name="token" value="{{token}}">
          <input type="email" name="username" value="{{email}}" autocomplete="username" readonly hidden>
          <label>Password <input type="password" name="password" autocomplete="new-password" required autofocus></label>
          <label>Again <input type="password" name="password_confirm" autocomplete="new-password" required></label>
          <button type="submit">Set password and sign in</button>
        </form>
        """,
        "message": """
        <h1>{{heading}}</h1>
        <p>{{text}}</p>
        {{#link}}<p><a href="{{href}}">{{label}}</a></p>{{/link}}
        """,
        "overview": """
        <h1>Overview</h1>
        <section id="stats" class="stats">
          <div class="stat"><span class="value">{{users}}</span><span class="label">users</span></div>
          <div class="stat"><span class="value">{{devices}}</span><span class="label">devices</span></div>
          <div class="stat"><span class="value">{{live_sessions}}</span><span class="label">live sessions</span></div>
          <div class="stat"><span class="value">{{sign_ins}}</span><span class="label">sign-ins, 24 h</span></div>
          <div class="stat"><span class="value">{{refreshes}}</span><span class="label">refreshes, 24 h</span></div>
        </section>
        <section class="card">
          <h2>Sign-ins and refreshes per hour, last 24 hours</h2>
          {{{chart}}}
          <p class="legend"><span class="swatch signins"></span> sign-ins <span class="swatch refreshes"></span> refreshes</p>
        </section>
        <section class="card">
          <h2>429 answers by limit</h2>
          <p class="muted">This process, since it started{{#since}} ({{since}}){{/since}}: each route's limits.</p>
          <div class="scroll"><table id="limits"><thead><tr><th>Route</th><th class="num">429s</th></tr></thead><tbody>
          {{#limits}}<tr><td><code>{{route}}</code></td><td class="num">{{count}}</td></tr>{{/limits}}
          {{^limits}}<tr><td colspan="2" class="muted">None.</td></tr>{{/limits}}
          </tbody></table></div>
        </section>
        """,
        "users": """
        <h1>Users</h1>
        <form id="search" method="get" action="/admin/users" class="inline">
          <input type="search" name="q" value="{{q}}" placeholder="User or device UUID, email, or provider subject" aria-label="Search">
          <label>Kind <select name="kind"><option value="">any</option>
            {{#kinds}}<option value="{{value}}"{{#selected}} selected{{/selected}}>{{value}}</option>{{/kinds}}</select></label>
          <label>Provider <select name="provider"><option value="">any</option>
            {{#providers}}<option value="{{value}}"{{#selected}} selected{{/selected}}>{{value}}</option>{{/providers}}</select></label>
          <label>State <select name="disabled"><option value="">any</option>
            <option value="false"{{#enabled_only}} selected{{/enabled_only}}>enabled</option>
            <option value="true"{{#disabled_only}} selected{{/disabled_only}}>disabled</option></select></label>
          <button type="submit">Search</button>
          {{#filtered}}<a href="/admin/users" class="quiet">Clear</a>{{/filtered}}
        </form>
        <div class="scroll"><table id="users"><thead><tr><th>User</th><th>Email</th><th>Kind</th><th>Providers</th><th>Devices</th><th>Last seen</th>\
        <th>Created</th></tr></thead><tbody>
        {{#users}}<tr data-user-id="{{id}}"><td><a href="/admin/users/{{id}}"><code>{{id}}</code></a>\
        {{#disabled}} <span class="badge danger-text">disabled</span>{{/disabled}}</td><td>{{email}}</td><td>{{kind}}</td><td>{{providers}}</td>\
        <td class="devices">{{devices}}</td><td>{{last_seen}}</td><td>{{created}}</td></tr>{{/users}}
        {{^users}}<tr><td colspan="7" class="muted">No user matches.</td></tr>{{/users}}
        </tbody></table></div>
        <p class="pager">{{#previous}}<a href="/admin/users?{{query}}page={{previous}}">← Previous</a>{{/previous}}
        {{#next}}<a href="/admin/users?{{query}}page={{next}}">Next →</a>{{/next}}</p>
        """,
        "user": """
        <p class="crumbs"><a href="/admin/users">Users</a> /</p>
        <h1>User <code class="wrap">{{id}}</code></h1>
        <p class="muted">{{kind}} user, created {{created}}; {{device_count}}, {{live_count}}.\
        {{#email}} Email <strong>{{address}}</strong> ({{state}}).{{/email}}</p>
        <section class="card" id="account-state">
          <h2>Account</h2>
          {{#disabled}}<p class="danger-text" id="disabled-state">Disabled since {{disabled}}: sign-ins and refreshes are refused.</p>
          {{#can_support}}<form id="enable-user" method="post" action="/admin/users/{{id}}/enable" class="inline">
            <input type="hidden" name="csrf" value="{{csrf}}"><button type="submit">Enable user</button></form>{{/can_support}}{{/disabled}}
          {{^disabled}}<p id="disabled-state">Enabled.</p>
          {{#can_support}}<form id="disable-user" method="post" action="/admin/users/{{id}}/disable" class="inline">
            <input type="hidden" name="csrf" value="{{csrf}}"><button type="submit" class="danger">Disable user</button>
            <span class="muted">Ends every session at once; sign-ins and refreshes are refused until enabled.</span></form>{{/can_support}}{{/disabled}}
          {{#has_email}}{{#can_support}}<div class="actions">
            {{#unverified}}<form id="resend-verification" method="post" action="/admin/users/{{id}}/email/resend-verification">
              <input type="hidden" name="csrf" value="{{csrf}}"><button type="submit">Resend verification email</button></form>
            <form id="mark-verified" method="post" action="/admin/users/{{id}}/email/mark-verified">
              <input type="hidden" name="csrf" value="{{csrf}}"><button type="submit">Mark email verified</button></form>{{/unverified}}
            <form id="send-reset" method="post" action="/admin/users/{{id}}/email/send-reset">
              <input type="hidden" name="csrf" value="{{csrf}}"><button type="submit">Send password reset</button></form>
          </div>{{/can_support}}{{/has_email}}
        </section>
        <div class="grid">
        <section class="card">
          <h2>Sessions</h2>
          <div class="scroll"><table id="sessions"><thead><tr><th>Session</th><th>Method</th><th>Device</th><th>Created</th><th>Last used</th>\
        <th></th></tr></thead><tbody>
          {{#sessions}}<tr data-session-id="{{id}}"><td><code>{{short}}</code></td><td class="method">{{method}}</td>\
        <td>{{#device}}<code>{{device}}</code>{{/device}}{{^device}}—{{/device}}</td>
            <td>{{created}}</td><td>{{last_used}}</td>
            <td>{{#live}}{{#can_support}}<form class="revoke-session" method="post" action="/admin/users/{{user}}/sessions/{{id}}/revoke">
              <input type="hidden" name="csrf" value="{{csrf}}"><button type="submit" class="danger small">Revoke</button></form>{{/can_support}}\
        {{^can_support}}live{{/can_support}}{{/live}}
              {{^live}}<span class="muted">ended ({{reason}})</span>{{/live}}</td></tr>{{/sessions}}
          {{^sessions}}<tr><td colspan="6" class="muted">No sessions.</td></tr>{{/sessions}}
          </tbody></table></div>
          {{#can_support}}<form id="revoke-all" method="post" action="/admin/users/{{id}}/sessions/revoke-all">
            <input type="hidden" name="csrf" value="{{csrf}}"><button type="submit" class="danger">Revoke all sessions</button></form>{{/can_support}}
        </section>
        <section class="card">
          <h2>Devices</h2>
          <div class="scroll"><table id="devices"><thead><tr><th>Device</th><th>Registered</th><th>Last seen</th><th>Key</th><th>Attested</th></tr></thead><tbody>
          {{#devices}}<tr><td><code>{{id}}</code></td><td>{{created}}</td><td>{{last_seen}}</td><td>{{key}}</td><td>{{attested}}</td></tr>{{/devices}}
          {{^devices}}<tr><td colspan="5" class="muted">No devices.</td></tr>{{/devices}}
          </tbody></table></div>
        </section>
        <section class="card">
          <h2>Identities</h2>
          <div class="scroll"><table id="identities"><thead><tr><th>Provider</th><th>Subject</th><th>Linked</th></tr></thead><tbody>
          {{#identities}}<tr><td>{{provider}}</td><td><code>{{subject}}</code></td><td>{{created}}</td></tr>{{/identities}}
          {{^identities}}<tr><td colspan="3" class="muted">None linked.</td></tr>{{/identities}}
          </tbody></table></div>
        </section>
        <section class="card">
          <h2>Budget</h2>
          <p>{{used}} used of {{limit}} ({{remaining}} left) per {{period}}.</p>
          {{#can_support}}<form id="budget" method="post" action="/admin/users/{{id}}/budget" class="inline">
            <input type="hidden" name="csrf" value="{{csrf}}">
            <label>Limit <input type="number" name="limit" min="0" step="any" value="{{limit}}" required></label>
            <button type="submit">Set limit</button></form>{{/can_support}}
        </section>
        <section class="card">
          <h2>Access codes</h2>
          <div class="scroll"><table id="access-codes"><thead><tr><th>Code ID</th><th>Note</th><th>Expires</th><th>Status</th><th></th></tr></thead><tbody>
          {{#codes}}<tr data-code-id="{{id}}"><td><code>{{short}}</code></td><td>{{note}}</td><td>{{expires}}</td><td>{{status}}</td>
            <td>{{#active}}{{#can_own}}<form class="revoke-code" method="post" action="/admin/access-codes/{{id}}/revoke">
              <input type="hidden" name="csrf" value="{{csrf}}"><input type="hidden" name="back" value="{{user}}">
              <button type="submit" class="danger small">Revoke</button></form>{{/can_own}}{{/active}}</td></tr>{{/codes}}
          {{^codes}}<tr><td colspan="5" class="muted">None.</td></tr>{{/codes}}
          </tbody></table></div>
          {{#can_own}}<form id="issue-code" method="post" action="/admin/users/{{id}}/access-codes" class="inline">
            <input type="hidden" name="csrf" value="{{csrf}}">
            <label>Expires in <input type="text" name="expires_in" placeholder="30d" size="6"></label>
            <label>Note <input type="text" name="note" maxlength="200" placeholder="ticket 42"></label>
            <label>Your password <input type="password" name="password" autocomplete="current-password" required></label>
            <button type="submit">Issue access code</button></form>{{/can_own}}
        </section>
        </div>
        <section class="card">
          <h2>Second factors</h2>
          <div class="scroll"><table id="second-factors"><thead><tr><th>Type</th><th>State</th><th>Added</th></tr></thead><tbody>
          {{#factors}}<tr><td>{{type}}</td><td>{{state}}</td><td>{{created}}</td></tr>{{/factors}}
          {{^factors}}<tr><td colspan="3" class="muted">None: the user signs in with one factor.</td></tr>{{/factors}}
          </tbody></table></div>
          {{#has_factors}}{{#can_support}}<form id="reset-second-factors" method="post" action="/admin/users/{{id}}/second-factors/reset" class="inline">
            <input type="hidden" name="csrf" value="{{csrf}}">
            <button type="submit" class="danger">Reset second factors</button>
            <span class="muted">For a lost authenticator app: removes the factors and recovery codes; sessions are kept.</span></form>\
        {{/can_support}}{{/has_factors}}
        </section>
        <section class="card">
          <h2>Passkeys</h2>
          <div class="scroll"><table id="passkeys"><thead><tr><th>Name</th><th>Created</th><th>Last used</th><th>Backed up</th><th></th></tr></thead><tbody>
          {{#passkeys}}<tr data-passkey-id="{{id}}"><td>{{name}}</td><td>{{created}}</td><td>{{last_used}}</td><td>{{backed_up}}</td>
            <td>{{#can_support}}<form class="remove-passkey" method="post" action="/admin/users/{{user}}/passkeys/{{id}}/remove">
              <input type="hidden" name="csrf" value="{{csrf}}"><button type="submit" class="danger small">Remove</button></form>{{/can_support}}</td></tr>\
        {{/passkeys}}
          {{^passkeys}}<tr><td colspan="5" class="muted">None.</td></tr>{{/passkeys}}
          </tbody></table></div>
        </section>
        <section class="card">
          <h2>Recent audit events</h2>
          <div class="scroll"><table id="user-audit"><thead><tr><th>Time</th><th>Actor</th><th>Action</th><th>Details</th></tr></thead><tbody>
          {{#events}}<tr><td>{{at}}</td><td>{{actor}}</td><td><code>{{action}}</code></td><td>{{details}}</td></tr>{{/events}}
          {{^events}}<tr><td colspan="4" class="muted">No events.</td></tr>{{/events}}
          </tbody></table></div>
          <p><a href="/admin/audit?q={{id}}">Every event about the user</a></p>
        </section>
        {{#can_own}}<section class="card danger-zone">
          <h2>Delete account</h2>
          <p>Deletes the user with devices, sessions, identities and access codes. It cannot be undone.</p>
          <a id="delete-user" class="button danger" href="/admin/users/{{id}}/delete">Delete this user…</a>
        </section>{{/can_own}}
        """,
        "issued": """
        <p class="crumbs"><a href="/admin/users/{{user}}">User {{user}}</a> /</p>
        <h1>Access code issued</h1>
        <p>This is the only time the code is shown. Give it to the user; it expires {{expires}}.</p>
        <pre id="issued-code" class="secret">{{code}}</pre>
        <p><a href="/admin/users/{{user}}">Back to the user</a></p>
        """,
        "confirm-delete": """
        <p class="crumbs"><a href="/admin/users/{{id}}">User {{id}}</a> /</p>
        <h1>Delete user <code>{{id}}</code>?</h1>
        <p>{{devices}}, {{live}}, {{identities}} and {{codes}} go with it. Its tokens stop
        working at once. The ID is retired.</p>
        <form id="confirm-delete" method="post" action="/admin/users/{{id}}/delete" class="inline">
          <input type="hidden" name="csrf" value="{{csrf}}">
          <label>Your password <input type="password" name="password" autocomplete="current-password" required></label>
          <button type="submit" class="danger">Delete the user</button>
          <a href="/admin/users/{{id}}">Cancel</a></form>
        """,
        "codes": """
        <h1>Access codes</h1>
        <div class="scroll"><table id="codes"><thead><tr><th>Code ID</th><th>User</th><th>Note</th><th>Created</th><th>Expires</th><th>Status</th><th></th></tr></thead><tbody>
        {{#codes}}<tr data-code-id="{{id}}"><td><code>{{short}}</code></td><td><a href="/admin/users/{{user}}"><code>{{user_short}}</code></a></td>
          <td>{{note}}</td><td>{{created}}</td><td>{{expires}}</td><td>{{status}}</td>
          <td>{{#active}}{{#can_own}}<form class="revoke-code" method="post" action="/admin/access-codes/{{id}}/revoke">
            <input type="hidden" name="csrf" value="{{csrf}}"><button type="submit" class="danger small">Revoke</button></form>{{/can_own}}{{/active}}</td></tr>{{/codes}}
        {{^codes}}<tr><td colspan="7" class="muted">No access codes. Issue one from a user's page.</td></tr>{{/codes}}
        </tbody></table></div>
        """,
        "keys": """
        <h1>Signing keys</h1>
        <p class="muted">New tokens are signed with the active key; retired keys keep verifying until they leave the JWKS.</p>
        <div class="scroll"><table id="keys"><thead><tr><th>Key ID</th><th>Algorithm</th><th>Created</th><th>Status</th></tr></thead><tbody>
        {{#keys}}<tr><td><code>{{kid}}</code></td><td>{{algorithm}}</td><td>{{created}}</td><td>{{status}}</td></tr>{{/keys}}
        </tbody></table></div>
        {{#can_own}}<form id="rotate-key" method="post" action="/admin/keys/rotate" class="inline">
          <input type="hidden" name="csrf" value="{{csrf}}">
          <label>Your password <input type="password" name="password" autocomplete="current-password" required></label>
          <button type="submit">Rotate: add a key that signs from now on</button></form>{{/can_own}}
        """,
        "audit": """
        <h1>Audit log</h1>
        <form id="audit-filter" method="get" action="/admin/audit" class="inline">
          <label>Action <input type="text" name="action" value="{{action}}" placeholder="user, session.revoke…"></label>
          <label>Actor or target <input type="search" name="q" value="{{q}}"></label>
          <button type="submit">Filter</button>{{#filtered}} <a href="/admin/audit" class="quiet">Clear</a>{{/filtered}}
        </form>
        <div class="scroll"><table id="audit"><thead><tr><th>Time</th><th>Actor</th><th>Action</th><th>Target</th><th>Source</th><th>Details</th></tr></thead><tbody>
        {{#events}}<tr><td>{{at}}</td><td>{{actor}}</td><td><code>{{action}}</code></td><td>{{target}}</td><td>{{source}}</td><td>{{details}}</td></tr>{{/events}}
        {{^events}}<tr><td colspan="6" class="muted">No events.</td></tr>{{/events}}
        </tbody></table></div>
        <p class="pager">{{#older}}<a href="/admin/audit?action={{action}}&amp;q={{q}}&amp;before={{older}}">Older →</a>{{/older}}</p>
        """,
    ]

    static let stylesheet = """
        :root{--fg:#1d2330;--muted:#667085;--line:#e4e7ec;--bg:#f6f7f9;--card:#fff;--accent:#3056d3;--danger:#c4321c;--ok:#16794c}
        *{box-sizing:border-box}
        body{margin:0;font:15px/1.5 -apple-system,BlinkMacSystemFont,"Segoe UI",Helvetica,Arial,sans-serif;color:var(--fg);background:var(--bg)}
        a{color:var(--accent);text-decoration:none}a:hover{text-decoration:underline}
        code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.88em}
        header.top{display:flex;flex-wrap:wrap;align-items:center;gap:.6em 2em;padding:.7em 2em;background:#151a26;color:#fff}
        header.top a{color:#d0d6e4}.brand{font-weight:700;color:#fff!important;font-size:1.1em}.mark{color:#7b9cff}
        nav#nav{display:flex;flex-wrap:wrap;gap:.3em 1.2em;flex:1}nav#nav a.active{color:#fff;border-bottom:2px solid #7b9cff;padding-bottom:2px}
        #logout{display:flex;align-items:center;gap:.6em;margin:0}.who{color:#aab3c5;font-size:.9em;overflow-wrap:anywhere}
        .role{font-size:.75em;color:#aab3c5;border:1px solid #4a5368;border-radius:4px;padding:0 .4em}
        main{max-width:1200px;margin:0 auto;padding:1.5em 2em 3em}main.narrow{max-width:420px;padding-top:4em}
        h1{font-size:1.5em;margin:.2em 0 .6em}h2{font-size:1.05em;margin:0 0 .7em}
        .muted{color:var(--muted)}.crumbs{margin:0;color:var(--muted)}
        .card{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:1.1em 1.3em;margin:0 0 1.2em}
        .grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(min(520px,100%),1fr));gap:0 1.2em}
        .grid>*{min-width:0}.scroll{overflow-x:auto;max-width:100%}.scroll>table{min-width:100%}
        h1 code,code.wrap{word-break:break-all}p,li{overflow-wrap:anywhere}
        .actions{display:flex;flex-wrap:wrap;gap:.6em;margin-top:.8em}.actions form{margin:0}
        .danger-text{color:var(--danger)}.badge{font-size:.8em;font-weight:600}
        .stack{display:flex;flex-direction:column;gap:.9em}.stack label{display:flex;flex-direction:column;gap:.3em;font-weight:600}
        form.inline{display:flex;flex-wrap:wrap;align-items:end;gap:.7em;margin:.8em 0}
        form.inline label{display:flex;flex-direction:column;gap:.2em;font-size:.9em;color:var(--muted)}
        input,select{font:inherit;padding:.45em .6em;border:1px solid #cfd4dc;border-radius:6px;background:#fff;max-width:100%}
        input[type=search]{min-width:min(28em,100%)}
        button,.button{font:inherit;font-weight:600;padding:.45em 1em;border-radius:6px;border:1px solid var(--accent);background:var(--accent);color:#fff;cursor:pointer;display:inline-block}
        button.quiet{background:transparent;border-color:#4a5368;color:#d0d6e4;font-weight:400;padding:.25em .7em}
        a.quiet{color:var(--muted)}
        .danger{background:var(--danger)!important;border-color:var(--danger)!important;color:#fff!important}
        .small{padding:.2em .7em;font-size:.85em}
        table{width:100%;border-collapse:collapse;background:var(--card)}
        th,td{text-align:left;padding:.5em .6em;border-bottom:1px solid var(--line);vertical-align:middle}
        th{font-size:.8em;text-transform:uppercase;letter-spacing:.04em;color:var(--muted);font-weight:600}
        td form{margin:0}.num{text-align:right}
        .flash{padding:.7em 1em;border-radius:8px;margin:0 0 1.2em;background:#e8f5ee;border:1px solid #b7dfc9;color:var(--ok)}
        .flash.error{background:#fdecea;border-color:#f5c2bb;color:var(--danger)}
        .stats{display:grid;grid-template-columns:repeat(5,1fr);gap:1em;margin-bottom:1.2em}
        .stat{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:1em 1.2em;display:flex;flex-direction:column}
        .stat .value{font-size:1.8em;font-weight:700}.stat .label{color:var(--muted);font-size:.9em}
        svg#activity-chart{width:100%;height:auto;display:block}
        .legend{color:var(--muted);font-size:.9em}.swatch{display:inline-block;width:.8em;height:.8em;border-radius:2px;margin:0 .3em 0 1em;vertical-align:-1px}
        .swatch.signins{background:#3056d3}.swatch.refreshes{background:#9bb0f0}
        pre.secret{background:#151a26;color:#e8ecf5;padding:1em;border-radius:8px;white-space:pre-wrap;word-break:break-all}
        .pager{display:flex;gap:1.5em}.spacer{flex:1}
        @media (max-width:640px){header.top{padding:.6em 1em;gap:.5em 1em}nav#nav{order:3;flex-basis:100%}
        main{padding:1em .8em 2em}main.narrow{padding-top:2em}.stats{grid-template-columns:repeat(2,1fr)}.card{padding:.9em}
        form.inline label{flex:1 1 100%}}
        .enrol{display:flex;flex-wrap:wrap;align-items:center;gap:1.5em}.enrol svg{display:block;border:1px solid var(--line);border-radius:6px}
        code.secret{font-size:1.05em;letter-spacing:.08em;word-break:break-all}
        ul.codes{list-style:none;padding:0;display:grid;grid-template-columns:repeat(2,max-content);gap:.4em 2em;font-size:1.1em}.danger-zone{border-color:#f5c2bb}
        """

    static let favicon = """
        <svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" fill="#151a26"/><path d="M8 3l5 5-5 5-5-5z" fill="#7b9cff"/></svg>
        """
}
