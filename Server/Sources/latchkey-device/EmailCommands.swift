import ArgumentParser
import Foundation
import LatchkeyAPI
import LatchkeyClient

struct Signup: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Give an account an email address and a password (POST /auth/register); the password is standard input's first line.",
        discussion: """
            With a session in use, the address is added to its user (the same user ID) and the session goes on; with --new-user, \
            or without a session, a new user is created and no session starts: verify the address, then login. Exit 1 for a \
            weak password, an invalid or taken address, or a server that sends no mail.
            """)
    @OptionGroup var options: DeviceOptions
    @Option(help: "The email address.") var email: String
    @Flag(help: "Create a new user even when a session is in use.") var newUser = false

    func run() async throws {
        let password = try StandardInput.firstLine(naming: "password")
        try await self.options.run { session in
            let account = try await session.register(email: self.email, password: password, attachToCurrentUser: !self.newUser)
            Output.print(Output.describe(account), json: self.options.json)
        }
    }
}

struct Login: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Sign in with an email address and its password (POST /auth/login); the password is standard input's first line.",
        discussion:
            "Exit 3 when the email or password is not right or the address is not verified yet, 4 after too many failed tries for the account. When the account has a second factor, exit 3 with mfa_required: the sign-in waits five minutes in --state for `mfa verify` (the code on standard input)."
    )
    @OptionGroup var options: DeviceOptions
    @Option(help: "The email address.") var email: String

    func run() async throws {
        let password = try StandardInput.firstLine(naming: "password")
        try await self.options.run { session in
            let signedIn = try await session.signIn(email: self.email, password: password)
            Output.print(Output.describe(.signedIn(signedIn), deviceID: try await session.deviceID()), json: self.options.json)
        }
    }
}

struct Verify: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Verify an email address (POST /auth/verify-email) with the mail's code or link token, or ask for a new mail.",
        discussion: """
            Give --email and --code, or --link, or --email and --resend. The code or the link's token is standard input's first \
            line, never an argument (the process list shows those). Exit 1 when the code or link is wrong, expired or used.
            """)
    @OptionGroup var options: DeviceOptions
    @Option(help: "The email address.") var email: String?
    @Flag(help: "Verify with the mail's 6-digit code, read from standard input.") var code = false
    @Flag(help: "Verify with the token of the mail's link, read from standard input.") var link = false
    @Flag(help: "Mail a new code and link to --email (POST /auth/resend-verification).") var resend = false

    private enum Action {
        case code(email: String)
        case link
        case resend(email: String)
    }

    private var action: Action? {
        switch (self.email, self.code, self.link, self.resend) {
        case (let email?, true, false, false): .code(email: email)
        case (nil, false, true, false): .link
        case (let email?, false, false, true): .resend(email: email)
        default: nil
        }
    }

    private static let usage = "give --email and --code, or --link, or --email and --resend"

    func validate() throws {
        guard self.action != nil else { throw ValidationError(Self.usage) }
    }

    func run() async throws {
        guard let action = self.action else { throw ValidationError(Self.usage) }
        let secret: String? =
            switch action {
            case .code: try StandardInput.firstLine(naming: "code from the mail")
            case .link: try StandardInput.firstLine(naming: "token of the mail's link")
            case .resend: nil
            }
        try await self.options.run { session in
            switch (action, secret) {
            case (.code(let email), let code?):
                Output.print(Output.describe(try await session.verifyEmail(email: email, code: code)), json: self.options.json)
            case (.link, let token?): Output.print(Output.describe(try await session.verifyEmail(token: token)), json: self.options.json)
            case (.resend(let email), _):
                Output.print(Output.describe(try await session.resendVerification(email: email), to: email), json: self.options.json)
            case (.code, nil), (.link, nil): throw ValidationError(Self.usage)
            }
        }
    }
}

struct Reset: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract:
            "Reset a forgotten password: --email mails a code and link (POST /auth/reset-password); --link, or --email with --code, sets the new password.",
        discussion: """
            Standard input's first line is the mail's code (--code) or its link's token (--link), its second line the new password: \
            never arguments, which the process list shows. Prints user_id and revoked_sessions: the server ends every session \
            of the user, and when the session here was one of them it is signed out here too (then state: signed_out). Exit 1 \
            when the code or link is wrong, expired or used, or the password is too weak.
            """)
    @OptionGroup var options: DeviceOptions
    @Option(help: "The email address.") var email: String?
    @Flag(help: "Set the password with the reset mail's 6-digit code (with --email), read from standard input.") var code = false
    @Flag(help: "Set the password with the token of the reset mail's link, read from standard input.") var link = false

    private enum Action {
        case request(email: String)
        case link
        case code(email: String)
    }

    private var action: Action? {
        switch (self.email, self.code, self.link) {
        case (let email?, false, false): .request(email: email)
        case (nil, false, true): .link
        case (let email?, true, false): .code(email: email)
        default: nil
        }
    }

    private static let usage = "give --email, or --link, or --email and --code"

    func validate() throws {
        guard self.action != nil else { throw ValidationError(Self.usage) }
    }

    func run() async throws {
        switch self.action {
        case .request(let email):
            try await self.options.run { session in
                Output.print(Output.describe(try await session.requestPasswordReset(email: email), to: email), json: self.options.json)
            }
        case .link:
            try await self.setPassword(with: "token of the mail's link") { session, token, password in
                try await session.resetPassword(token: token, newPassword: password)
            }
        case .code(let email):
            try await self.setPassword(with: "code from the mail") { session, code, password in
                try await session.resetPassword(email: email, code: code, newPassword: password)
            }
        case nil: throw ValidationError(Self.usage)
        }
    }

    /// Reads the mail's code or token and the new password, sets it with `reset`, and prints whose it is and whether the
    /// session here ended.
    private func setPassword(
        with secret: String, _ reset: (LatchkeySession, String, String) async throws -> PasswordChangedResponse
    ) async throws {
        let code = try StandardInput.firstLine(naming: secret)
        guard let password = readLine(strippingNewline: true), !password.isEmpty else {
            throw ValidationError("give the new password as standard input's second line, after the \(secret)")
        }
        try await self.options.run { session in
            let changed = try await reset(session, code, password)
            var result: [String: Any] = ["user_id": changed.userID, "revoked_sessions": changed.revokedSessions]
            if let devices = changed.revokedDevices { result["revoked_devices"] = devices }
            if case .signedOut(reason: .revoked) = await session.state { result["state"] = Output.name(of: .signedOut()) }
            Output.print(result, json: self.options.json)
        }
    }
}

/// Where passwords come from: standard input, never an argument (which `ps` and the shell's history would show).
enum StandardInput {
    /// The first line of standard input without its line break; a usage error (exit 2) when there is none.
    static func firstLine(naming what: String) throws -> String {
        guard let line = readLine(strippingNewline: true), !line.isEmpty else {
            throw ValidationError("give the \(what) as standard input's first line, e.g. printf '%s\\n' \"$PASSWORD\" | latchkey-device …")
        }
        return line
    }
}

extension Output {
    /// An account's address as a dictionary.
    static func describe(_ account: EmailAccountResponse) -> [String: Any] {
        ["user_id": account.userID, "email": account.email, "email_verified": account.emailVerified]
    }

    /// The server's answer to a request for a mail to `email`.
    static func describe(_ accepted: MailAcceptedResponse, to email: String) -> [String: Any] {
        ["email": email, "message": accepted.message]
    }
}
