import Foundation

/// What a mail is for: a code (`verify`, `reset`), a security notice to an account's verified address when a way to
/// sign in was changed or removed (`notice`), or the note to an address's owner that someone tried to sign up with it
/// (`signup-attempt`).
enum MailPurpose: String, Sendable, CaseIterable {
    case verify
    case reset
    case notice
    case signupAttempt = "signup-attempt"
}

/// The mails' texts: a subject, a plain-text body and an HTML body for each purpose, with placeholders.
///
/// Placeholders: `{{app_name}}`, `{{email}}`, `{{code}}` (6 digits), `{{link}}` (the page that confirms the code),
/// `{{minutes}}` (how long they stay valid), and in notices `{{change}}` (a sentence saying what changed). In HTML bodies
/// every value is HTML-escaped.
///
/// `email.templates` names a directory whose files replace the built-in texts one by one: `<purpose>.subject.txt`,
/// `<purpose>.txt` and `<purpose>.html` for each purpose (`verify`, `reset`, `notice`, `signup-attempt`; UTF-8; a file
/// that is absent keeps the built-in text), and the pages the links open (``PersonPageTemplates``). They are read once,
/// at start.
struct MailTemplates: Sendable {
    struct Texts: Sendable {
        var subject: String
        var text: String
        var html: String
    }

    var verify = Texts(
        subject: "Your {{app_name}} verification code: {{code}}",
        text: """
            Hello,

            Your code to verify this email address for {{app_name}} is:

                {{code}}

            Or open this link and press the button on the page:
            {{link}}

            The code and the link work once, for {{minutes}} minutes. If you did not sign up, ignore this mail.
            """,
        html: """
            <!doctype html>
            <html><body style="font-family: -apple-system, Helvetica, Arial, sans-serif">
            <p>Hello,</p>
            <p>Your code to verify this email address for {{app_name}} is:</p>
            <p style="font-size: 28px; letter-spacing: 4px"><b>{{code}}</b></p>
            <p>Or <a href="{{link}}">open this link</a> and press the button on the page.</p>
            <p>The code and the link work once, for {{minutes}} minutes. If you did not sign up, ignore this mail.</p>
            </body></html>
            """)

    var reset = Texts(
        subject: "Reset your {{app_name}} password",
        text: """
            Hello,

            Someone (we hope you) asked to reset the password of {{email}} for {{app_name}}. Your reset code is:

                {{code}}

            Or open this link to choose a new password:
            {{link}}

            The code and the link work once, for {{minutes}} minutes. A reset signs you out everywhere. If you did not ask
            for it, ignore this mail: your password stays as it is.
            """,
        html: """
            <!doctype html>
            <html><body style="font-family: -apple-system, Helvetica, Arial, sans-serif">
            <p>Hello,</p>
            <p>Someone (we hope you) asked to reset the password of {{email}} for {{app_name}}. Your reset code is:</p>
            <p style="font-size: 28px; letter-spacing: 4px"><b>{{code}}</b></p>
            <p>Or <a href="{{link}}">open this link</a> to choose a new password.</p>
            <p>The code and the link work once, for {{minutes}} minutes. A reset signs you out everywhere. If you did not ask for it,
            ignore this mail: your password stays as it is.</p>
            </body></html>
            """)

    var notice = Texts(
        subject: "Security notice: your {{app_name}} sign-in changed",
        text: """
            Hello,

            {{change}}

            This is about the {{app_name}} account of {{email}}. If you did it, there is nothing to do. If you did not,
            reset your password at once (the app's "forgot password") and sign out everywhere, then contact support.
            """,
        html: """
            <!doctype html>
            <html><body style="font-family: -apple-system, Helvetica, Arial, sans-serif">
            <p>Hello,</p>
            <p><b>{{change}}</b></p>
            <p>This is about the {{app_name}} account of {{email}}. If you did it, there is nothing to do. If you did not, reset
            your password at once (the app's "forgot password") and sign out everywhere, then contact support.</p>
            </body></html>
            """)

    var signupAttempt = Texts(
        subject: "Someone tried to sign up for {{app_name}} with your address",
        text: """
            Hello,

            Someone (perhaps you) tried to create a {{app_name}} account with {{email}}, which already has one. Nothing
            changed: your account, its password and its sessions stay as they are.

            If it was you, sign in instead, or use "forgot password" if you no longer know it. If it was not, ignore this mail.
            """,
        html: """
            <!doctype html>
            <html><body style="font-family: -apple-system, Helvetica, Arial, sans-serif">
            <p>Hello,</p>
            <p>Someone (perhaps you) tried to create a {{app_name}} account with {{email}}, which already has one. Nothing
            changed: your account, its password and its sessions stay as they are.</p>
            <p>If it was you, sign in instead, or use "forgot password" if you no longer know it. If it was not, ignore this mail.</p>
            </body></html>
            """)

    /// The pages the mails' links open, replaceable from the same directory.
    var pages = PersonPageTemplates()

    init() {}

    private func texts(_ purpose: MailPurpose) -> Texts {
        switch purpose {
        case .verify: self.verify
        case .reset: self.reset
        case .notice: self.notice
        case .signupAttempt: self.signupAttempt
        }
    }

    private mutating func set(_ texts: Texts, for purpose: MailPurpose) {
        switch purpose {
        case .verify: self.verify = texts
        case .reset: self.reset = texts
        case .notice: self.notice = texts
        case .signupAttempt: self.signupAttempt = texts
        }
    }

    /// The built-in texts with those of `directory` in their place; throws when the directory cannot be read.
    init(directory: String?) throws {
        guard let directory else { return }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw LatchkeyConfigurationError(description: "email.templates: \(directory) is not a directory")
        }
        func read(_ name: String, _ fallback: String) throws -> String {
            let path = (directory as NSString).appendingPathComponent(name)
            guard FileManager.default.fileExists(atPath: path) else { return fallback }
            return try String(contentsOfFile: path, encoding: .utf8)
        }
        for purpose in MailPurpose.allCases {
            let name = purpose.rawValue
            var texts = self.texts(purpose)
            texts.subject = try read("\(name).subject.txt", texts.subject).trimmingCharacters(in: .whitespacesAndNewlines)
            texts.text = try read("\(name).txt", texts.text)
            texts.html = try read("\(name).html", texts.html)
            self.set(texts, for: purpose)
        }
        self.pages = try PersonPageTemplates(directory: directory)
    }

    /// The subject, text and HTML of `purpose` with `values` in place of their placeholders.
    func render(_ purpose: MailPurpose, values: [String: String]) -> Texts {
        let texts = self.texts(purpose)
        func fill(_ template: String, escaping: Bool) -> String {
            values.reduce(template) { text, pair in
                text.replacingOccurrences(of: "{{\(pair.key)}}", with: escaping ? Self.escapeHTML(pair.value) : pair.value)
            }
        }
        let subject = fill(texts.subject, escaping: false).replacingOccurrences(of: "\r", with: " ").replacingOccurrences(of: "\n", with: " ")
        return Texts(subject: subject, text: fill(texts.text, escaping: false), html: fill(texts.html, escaping: true))
    }

    static func escapeHTML(_ text: String) -> String {
        var escaped = ""
        for character in text {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&#39;"
            default: escaped.append(character)
            }
        }
        return escaped
    }
}
