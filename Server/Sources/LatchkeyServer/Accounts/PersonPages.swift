import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// The pages a person opens from a mail's link (`GET /api/v1/auth/verify-email`, `GET /api/v1/auth/reset-password`) and
/// the answers to their forms.
enum PersonPage: String, Sendable, CaseIterable {
    /// The verification link's page: a button that verifies. `{{email}}`, `{{token}}`.
    case verify = "verify-page"
    /// The address is verified. `{{email}}`.
    case verified = "verified-page"
    /// The reset link's page: a form for the new password. `{{email}}`, `{{token}}`.
    case reset = "reset-page"
    /// The password is changed. `{{email}}`.
    case resetDone = "reset-done-page"
    /// Anything that went wrong (an incomplete or spent link, a refused password, email accounts off). `{{title}}`,
    /// `{{message}}`.
    case error = "error-page"
}

/// The person-facing pages' HTML, each a whole document with placeholders, replaceable from `email.templates` as the
/// mails are (a file `<page>.html`: `verify-page.html`, `verified-page.html`, `reset-page.html`, `reset-done-page.html`,
/// `error-page.html`; UTF-8; read once, at start).
///
/// Placeholders: `{{app_name}}` (`email.app-name`) on every page; `{{email}}` (the address in Unicode: an IDNA domain
/// shows as the person wrote it, not as `xn--…`); `{{token}}` on the two link pages (the form must post it as `token` to
/// `verify-email/form`, or with `new_password` to `reset-password/form`); `{{title}}` and `{{message}}` on the error page.
/// Every value is HTML-escaped. The pages are served with a Content-Security-Policy that allows inline styles and forms
/// posting to this server only: no scripts, images or outside style sheets.
struct PersonPageTemplates: Sendable {
    private var pages: [PersonPage: String] = [
        .verify: Self.layout(
            "Verify your email address",
            """
            <p>Press the button to verify {{email}} for {{app_name}}.</p>
            <form method="post" action="verify-email/form">
            <input type="hidden" name="token" value="{{token}}">
            <button type="submit">Verify my email address</button>
            </form>
            """),
        .verified: Self.layout(
            "Email address verified", "<p>{{email}} is verified. You can go back to {{app_name}} and sign in.</p>"),
        .reset: Self.layout(
            "Choose a new password",
            """
            <p>Choose a new {{app_name}} password for {{email}}.</p>
            <form method="post" action="reset-password/form">
            <input type="hidden" name="token" value="{{token}}">
            <p><label>New password <input type="password" name="new_password" autocomplete="new-password" minlength="8" required></label></p>
            <button type="submit">Set the new password</button>
            </form>
            <p>Setting it signs you out everywhere.</p>
            """),
        .resetDone: Self.layout(
            "Password changed",
            "<p>The {{app_name}} password of {{email}} is changed and you are signed out everywhere. Sign in with the new one.</p>"),
        .error: Self.layout("{{title}}", "<p>{{message}}</p>"),
    ]

    /// The built-in pages.
    init() {}

    /// The built-in pages with those of `directory` in their place (a file that is absent keeps the built-in page).
    init(directory: String) throws {
        for page in PersonPage.allCases {
            let path = (directory as NSString).appendingPathComponent(page.rawValue + ".html")
            guard FileManager.default.fileExists(atPath: path) else { continue }
            self.pages[page] = try String(contentsOfFile: path, encoding: .utf8)
        }
    }

    /// `page` with `values` (HTML-escaped) in place of their placeholders, in one pass: a value is never read for
    /// placeholders itself (an address may hold `{{`). A placeholder without a value stays as it is.
    func render(_ page: PersonPage, values: [String: String]) -> String {
        var rest = Substring(self.pages[page] ?? "")
        var html = ""
        while let open = rest.range(of: "{{"), let close = rest[open.upperBound...].range(of: "}}") {
            html += rest[..<open.lowerBound]
            let name = String(rest[open.upperBound..<close.lowerBound])
            html += values[name].map(MailTemplates.escapeHTML) ?? String(rest[open.lowerBound..<close.upperBound])
            rest = rest[close.upperBound...]
        }
        return html + rest
    }

    private static func layout(_ title: String, _ body: String) -> String {
        """
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
        <title>\(title) · {{app_name}}</title>
        <style>body{font-family:-apple-system,Helvetica,Arial,sans-serif;max-width:30em;margin:3em auto;padding:0 1em}\
        .app{color:#555;font-weight:600;margin-bottom:0}button{font-size:1.1em;padding:.5em 1em}</style>
        </head><body><p class="app">{{app_name}}</p><h1>\(title)</h1>
        \(body)
        </body></html>
        """
    }
}

/// The pages as this server shows them: its templates and its app's name.
struct PersonPages: Sendable {
    let templates: PersonPageTemplates
    let appName: String

    /// `page` filled with `values` and the app's name, answered with `status`.
    func answer(_ status: HTTPResponse.Status, _ page: PersonPage, _ values: [String: String] = [:]) -> Response {
        let html = self.templates.render(page, values: values.merging(["app_name": self.appName]) { value, _ in value })
        // Cannot be framed, cached, or leak its URL (which holds a token) in a Referer.
        return Response(
            status: status,
            headers: [
                .contentType: "text/html; charset=utf-8", .cacheControl: "no-store", HTTPField.Name("Referrer-Policy")!: "no-referrer",
                HTTPField.Name("X-Frame-Options")!: "DENY",
                .contentSecurityPolicy: "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
            ],
            body: ResponseBody(byteBuffer: ByteBuffer(string: html)))
    }

    /// The error page.
    func error(_ status: HTTPResponse.Status, _ title: String, _ message: String) -> Response {
        self.answer(status, .error, ["title": title, "message": message])
    }
}
