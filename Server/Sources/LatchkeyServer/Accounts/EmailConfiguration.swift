import Configuration
import Foundation
import LatchkeyPasswords
import LatchkeySMTP

/// Email and password accounts: the SMTP relay (`smtp.*`), the mails (`email.*`) and password hashing
/// (`passwords.*`). The email routes are on when `smtp.host` is set.
///
/// - `smtp.host`, `smtp.port` (default by TLS mode: 587, 465 or 25), `smtp.tls` (`starttls`, the default; `tls` for
///   TLS from the first byte; `none` for a local relay only), `smtp.username`, `smtp.password` (a secret: never logged,
///   never in an error), `smtp.helo-name` (this host's name in EHLO, default `localhost`), `smtp.ca-file` (a PEM file of
///   the CA certificates the relay's certificate may chain to, instead of the system's), `smtp.timeout` (seconds a
///   delivery may take, default 60).
/// - `email.from` (the sender address, required with `smtp.host`), `email.app-name` (the sender's display name and the
///   name in the mails, default `Latchkey`), `email.link-base-url` (where the mails' links point, default the
///   server's issuer URL: a universal-link domain of the app can stand there), `email.templates` (a directory of
///   template files that replace the built-in ones, see ``MailTemplates``), `email.retry-interval` (seconds before the
///   first retry of a failed delivery, doubled each time up to an hour; default 30), `email.max-attempts` (default 20:
///   after that a mail stays in the outbox as failed, for `latchkey outbox retry`), `email.poll-interval` (seconds
///   between outbox scans when nothing woke the sender, default 5), `email.reveal-existing` (default false: a registration
///   of an address another account verified is answered 201 like any other, and that account's address is mailed that
///   someone tried to sign up with it; true answers 422 `email_taken` instead, for apps that prefer telling people).
/// - `passwords.hashing-threads` (threads that hash passwords, default the number of cores less one, at least one),
///   `passwords.queue-limit` (hashes that may wait for a thread, default 64: beyond that 503 with `Retry-After`),
///   `passwords.argon2-memory` (KiB, default OWASP's 19456) and `passwords.argon2-iterations` (default 2). Stored
///   hashes at other parameters are replaced at the next successful sign-in.
public struct EmailConfiguration: Sendable {
    public var smtpHost: String?
    public var smtpPort: Int?
    public var smtpTLS = "starttls"
    public var smtpUsername: String?
    public var smtpPassword: String?
    public var smtpHeloName = "localhost"
    public var smtpCAFile: String?
    public var smtpTimeout: TimeInterval = 60
    public var from: String?
    public var appName = "Latchkey"
    public var linkBaseURL: String?
    public var templatesDirectory: String?
    public var retryInterval: TimeInterval = 30
    public var maxAttempts = 20
    public var pollInterval: TimeInterval = 5
    /// `email.reveal-existing`: answer 422 `email_taken` for an address another account verified.
    public var revealExisting = false
    public var hashingThreads = max(1, ProcessInfo.processInfo.activeProcessorCount - 1)
    public var queueLimit = 64
    public var argon2Memory = Argon2.Parameters.owasp.memoryKibibytes
    public var argon2Iterations = Argon2.Parameters.owasp.iterations

    public init() {}

    init(reader: ConfigReader) {
        let defaults = Self()
        let smtp = reader.scoped(to: "smtp")
        self.smtpHost = smtp.string(forKey: "host").flatMap { $0.isEmpty ? nil : $0 }
        self.smtpPort = smtp.int(forKey: "port")
        self.smtpTLS = smtp.string(forKey: "tls", default: defaults.smtpTLS).lowercased()
        self.smtpUsername = smtp.string(forKey: "username").flatMap { $0.isEmpty ? nil : $0 }
        self.smtpPassword = smtp.string(forKey: "password", isSecret: true)
        self.smtpHeloName = smtp.string(forKey: "helo-name", default: defaults.smtpHeloName)
        self.smtpCAFile = smtp.string(forKey: "ca-file")
        self.smtpTimeout = smtp.double(forKey: "timeout", default: defaults.smtpTimeout)
        let email = reader.scoped(to: "email")
        self.from = email.string(forKey: "from")
        self.appName = email.string(forKey: "app-name", default: defaults.appName)
        self.linkBaseURL = email.string(forKey: "link-base-url")
        self.templatesDirectory = email.string(forKey: "templates")
        self.retryInterval = email.double(forKey: "retry-interval", default: defaults.retryInterval)
        self.maxAttempts = email.int(forKey: "max-attempts", default: defaults.maxAttempts)
        self.pollInterval = email.double(forKey: "poll-interval", default: defaults.pollInterval)
        self.revealExisting = email.bool(forKey: "reveal-existing", default: defaults.revealExisting)
        let passwords = reader.scoped(to: "passwords")
        self.hashingThreads = passwords.int(forKey: "hashing-threads", default: defaults.hashingThreads)
        self.queueLimit = passwords.int(forKey: "queue-limit", default: defaults.queueLimit)
        self.argon2Memory = passwords.int(forKey: "argon2-memory", default: defaults.argon2Memory)
        self.argon2Iterations = passwords.int(forKey: "argon2-iterations", default: defaults.argon2Iterations)
    }

    /// Whether the email routes are on.
    public var isEnabled: Bool { self.smtpHost != nil }

    /// The algorithm new password hashes use.
    var hashAlgorithm: PasswordHasher.Algorithm {
        .argon2(.init(variant: .argon2id, memoryKibibytes: self.argon2Memory, iterations: self.argon2Iterations, parallelism: 1))
    }

    /// Whether the hashing parameters are below OWASP's (a warning at start; tests use cheap ones).
    var isBelowOWASP: Bool {
        self.argon2Memory < Argon2.Parameters.owasp.memoryKibibytes || self.argon2Iterations < Argon2.Parameters.owasp.iterations
    }

    var tlsMode: SMTPConfiguration.TLSMode? {
        switch self.smtpTLS {
        case "starttls": .startTLS
        case "tls", "implicit": .implicit
        case "none": SMTPConfiguration.TLSMode.none
        default: nil
        }
    }

    /// What is wrong with the settings, if anything.
    var problems: [String] {
        var problems: [String] = []
        if (try? PasswordHasher(algorithm: self.hashAlgorithm)) == nil {
            problems.append("passwords.argon2-memory must be 8 to 1048576 KiB and passwords.argon2-iterations 1 to 10")
        }
        if self.hashingThreads < 1 || self.hashingThreads > 256 { problems.append("passwords.hashing-threads must be 1 to 256") }
        if self.queueLimit < 0 { problems.append("passwords.queue-limit must be 0 or more") }
        guard self.isEnabled else { return problems }
        if self.tlsMode == nil { problems.append("smtp.tls must be starttls, tls or none, not \"\(self.smtpTLS)\"") }
        if let port = self.smtpPort, !(1...65_535).contains(port) { problems.append("smtp.port must be 1 to 65535") }
        if self.smtpUsername != nil && (self.smtpPassword ?? "").isEmpty { problems.append("smtp.password is required with smtp.username") }
        if !(self.smtpTimeout > 0) { problems.append("smtp.timeout must be more than 0 seconds") }
        if let from = self.from {
            if (try? EmailAddress(parsing: from)) == nil { problems.append("email.from is not a valid email address") }
        } else {
            problems.append("email.from (the sender address) is required with smtp.host")
        }
        if let base = self.linkBaseURL, URL(string: base)?.scheme.map({ ["http", "https"].contains($0) }) != true {
            problems.append("email.link-base-url must be an http or https URL")
        }
        if !(self.retryInterval > 0) { problems.append("email.retry-interval must be more than 0 seconds") }
        if self.maxAttempts < 1 { problems.append("email.max-attempts must be 1 or more") }
        if !(self.pollInterval > 0) { problems.append("email.poll-interval must be more than 0 seconds") }
        return problems
    }

    /// The SMTP client's settings; throws when the CA file cannot be read.
    func smtpConfiguration() throws -> SMTPConfiguration? {
        guard let host = self.smtpHost, let tls = self.tlsMode else { return nil }
        let roots: SMTPConfiguration.TrustRoots =
            try self.smtpCAFile.map { .certificateAuthorities(pem: try String(contentsOfFile: $0, encoding: .utf8)) } ?? .system
        return SMTPConfiguration(
            host: host, port: self.smtpPort, tls: tls,
            credentials: self.smtpUsername.map { .init(username: $0, password: self.smtpPassword ?? "") }, heloName: self.smtpHeloName,
            trustRoots: roots, commandTimeout: .seconds(min(30, self.smtpTimeout)), totalTimeout: .seconds(self.smtpTimeout))
    }
}
