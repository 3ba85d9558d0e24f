import NIOCore
import NIOSSL

/// The TLS side of a configuration: one `NIOSSLContext` (loading the trust store once per client) and the name to
/// verify the server's certificate against.
struct SMTPTLSUpgrade: Sendable {
    let context: NIOSSLContext
    /// The host for SNI and name verification; nil for an IP address, which NIOSSL then checks against the
    /// certificate's IP subject alternative names (an IP address may not be sent as SNI).
    let serverHostname: String?

    init(configuration: SMTPConfiguration) throws {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.minimumTLSVersion = .tlsv12
        tls.certificateVerification = .fullVerification
        switch configuration.trustRoots.base {
        case .system:
            tls.trustRoots = .default
        case .certificateAuthorities(let pem):
            let certificates = try NIOSSLCertificate.fromPEMBytes(Array(pem.utf8))
            guard !certificates.isEmpty else { throw NIOSSLError.failedToLoadCertificate }
            tls.trustRoots = .certificates(certificates)
        }
        self.context = try NIOSSLContext(configuration: tls)
        let isAddress = (try? SocketAddress(ipAddress: configuration.host, port: 0)) != nil
        self.serverHostname = isAddress ? nil : configuration.host
    }

    func makeHandler() throws -> NIOSSLClientHandler {
        try NIOSSLClientHandler(context: self.context, serverHostname: self.serverHostname)
    }
}
