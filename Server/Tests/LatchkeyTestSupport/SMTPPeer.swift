import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `Tests/interop/smtp_peer.py`, the aiosmtpd test server, as the integration tests find it:
///
/// - `LATCHKEY_TEST_SMTP_PEER`: the JSON of a running peer's `ready` line (what follows `ready `), so one peer serves a
///   whole test run (`scripts/test` starts it);
/// - otherwise `LATCHKEY_TEST_PYTHON`: a python with aiosmtpd and cryptography, with which the first test that needs
///   the peer starts one for this test process (it exits when the process does: `--exit-with-parent`).
///
/// Neither set: the integration tests are skipped. Tests share the peer, so each uses recipients of its own.
/// Shared by the SMTP client's tests and the server's.
public struct SMTPPeer: Sendable, Decodable {
    public struct Ports: Sendable, Decodable {
        public let plain: Int
        public let heloOnly: Int
        public let starttls: Int
        public let starttlsLogin: Int
        public let implicitTLS: Int
        public let implicitTLSWrongName: Int

        enum CodingKeys: String, CodingKey {
            case plain, starttls
            case heloOnly = "helo_only"
            case starttlsLogin = "starttls_login"
            case implicitTLS = "implicit_tls"
            case implicitTLSWrongName = "implicit_tls_wrong_name"
        }
    }

    public let host: String
    public let ports: Ports
    public let http: String
    public let caCertificatePath: String
    public let username: String
    public let password: String

    enum CodingKeys: String, CodingKey {
        case host, ports, http, username, password
        case caCertificatePath = "ca_cert"
    }

    static var runningPeerJSON: String? { Self.environment("LATCHKEY_TEST_SMTP_PEER") }
    static var python: String? { Self.environment("LATCHKEY_TEST_PYTHON") }
    public static var isAvailable: Bool { Self.runningPeerJSON != nil || Self.python != nil }
    public static let skipReason: Comment = """
        neither LATCHKEY_TEST_SMTP_PEER (a running Tests/interop/smtp_peer.py's ready JSON) nor LATCHKEY_TEST_PYTHON \
        (a python with aiosmtpd and cryptography to start one) is set, so there is no SMTP server to test against
        """

    /// The peer of this test run, started on first use when none is running.
    public static func shared() async throws -> SMTPPeer {
        try await SMTPPeerLauncher.shared.peer()
    }

    /// A recipient address no other test uses, `localPart+tag@example.test` (the peer's behaviours key on the local part).
    public static func recipient(_ localPart: String = "user") -> String {
        "\(localPart)+\(UUID().uuidString.prefix(13).lowercased())@example.test"
    }

    /// The test CA's certificate, to trust the peer's TLS certificates.
    public var caCertificatePEM: String {
        get throws { try String(contentsOfFile: self.caCertificatePath, encoding: .utf8) }
    }

    /// The messages the peer stored for `recipient`; with `wait`, waits (on the peer's side) for the first one.
    public func messages(to recipient: String, wait: Duration = .zero) async throws -> [DeliveredMessage] {
        var components = URLComponents(string: self.http + "/messages")!
        components.queryItems = [
            URLQueryItem(name: "to", value: recipient), URLQueryItem(name: "wait", value: "\(wait.components.seconds)"),
        ]
        // A "+" in a query means a space to the peer's parser (and URLComponents leaves it as it is).
        components.percentEncodedQuery = components.percentEncodedQuery?.replacingOccurrences(of: "+", with: "%2B")
        let (data, response) = try await URLSession.shared.data(from: components.url!)
        guard (response as? HTTPURLResponse)?.statusCode == 200 else {
            throw ProcessRunnerError("smtp peer GET /messages: \(String(decoding: data, as: UTF8.self))")
        }
        return try JSONDecoder().decode([DeliveredMessage].self, from: data)
    }

    private static func environment(_ name: String) -> String? {
        ProcessInfo.processInfo.environment[name].flatMap { $0.isEmpty ? nil : $0 }
    }
}

/// A message as the peer stored it.
public struct DeliveredMessage: Sendable, Decodable {
    public struct Authentication: Sendable, Decodable {
        public let mechanism: String
        public let username: String
    }

    public let port: String
    public let mailFrom: String
    public let recipients: [String]
    public let raw: String
    public let tls: Bool
    public let authentication: Authentication?
    public let helo: String?

    enum CodingKeys: String, CodingKey {
        case port, raw, tls, helo
        case mailFrom = "mail_from"
        case recipients = "rcpt_tos"
        case authentication = "auth"
    }
}
