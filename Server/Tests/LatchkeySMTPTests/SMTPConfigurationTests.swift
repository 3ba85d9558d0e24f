import LatchkeySMTP
import Testing

/// A configuration that cannot work is refused when the client is made, as a permanent error.
struct SMTPConfigurationTests {
    static func clientError(_ configuration: SMTPConfiguration) -> SMTPError? {
        do {
            _ = try SMTPClient(configuration: configuration)
            Issue.record("the client was made")
            return nil
        } catch {
            return error as? SMTPError
        }
    }

    @Test func anUnreadableCACertificateIsRefused() {
        let error = Self.clientError(SMTPConfiguration(host: "localhost", tls: .implicit, trustRoots: .certificateAuthorities(pem: "not a PEM")))
        #expect(error?.code == .invalidConfiguration)
        #expect(error?.kind == .permanent)
    }

    @Test(arguments: ["", "two words", "crlf\r\nRCPT TO:<x@example.com>", "<angle>"])
    func aHELONameThatCouldBreakTheCommandIsRefused(name: String) {
        #expect(Self.clientError(SMTPConfiguration(host: "localhost", tls: .none, heloName: name))?.code == .invalidConfiguration)
    }

    @Test func aNULInTheCredentialsIsRefusedWithoutShowingThePassword() {
        let credentials = SMTPConfiguration.Credentials(username: "user", password: "pass\0word-secret")
        let error = Self.clientError(SMTPConfiguration(host: "localhost", tls: .startTLS, credentials: credentials))
        #expect(error?.code == .invalidConfiguration)
        #expect(!"\(error.map { "\($0)" } ?? "")".contains("word-secret"))
    }

    @Test func thePortDefaultsToTheTLSModesPort() {
        #expect(SMTPConfiguration(host: "h", tls: .none).port == 25)
        #expect(SMTPConfiguration(host: "h", tls: .startTLS).port == 587)
        #expect(SMTPConfiguration(host: "h", tls: .implicit).port == 465)
        #expect(SMTPConfiguration(host: "h", port: 2525, tls: .startTLS).port == 2525)
    }
}
