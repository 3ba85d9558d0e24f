import Foundation

/// The origin of an `http` or `https` URL (RFC 6454: scheme, host and port), which decides where credentials may go.
///
/// Scheme and host compare case-insensitively, a missing port is the scheme's default (80, 443), and hosts compare whole:
/// `api.example.com.evil.net` is not `api.example.com`. A WebSocket URL has the origin of its HTTP twin (`wss` is
/// `https`, `ws` is `http`), so a WebSocket to a listed API origin may carry `?token=`.
struct HTTPOrigin: Hashable, Sendable, CustomStringConvertible {
    /// `http` or `https`.
    let scheme: String
    /// The host, lowercase; an IPv6 address without its brackets.
    let host: String
    /// The port, explicit or the scheme's default.
    let port: Int

    /// `url`'s origin; `nil` unless it is an absolute `http`, `https`, `ws` or `wss` URL with a host.
    init?(_ url: URL) {
        guard let components = URLComponents(url: url, resolvingAgainstBaseURL: false), let given = components.scheme?.lowercased(),
            let scheme = Self.httpSchemes[given], var host = components.host?.lowercased(), !host.isEmpty
        else { return nil }
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        self.scheme = scheme
        self.host = host
        self.port = components.port ?? (scheme == "https" ? 443 : 80)
    }

    private static let httpSchemes = ["http": "http", "https": "https", "ws": "http", "wss": "https"]

    /// Whether the host is this machine: `localhost`, an address in 127.0.0.0/8, or `::1`.
    var isLoopback: Bool {
        if self.host == "localhost" { return true }
        var ipv4 = in_addr()
        if inet_pton(AF_INET, self.host, &ipv4) == 1 { return withUnsafeBytes(of: &ipv4) { $0.first == 127 } }
        var ipv6 = in6_addr()
        guard inet_pton(AF_INET6, self.host, &ipv6) == 1 else { return false }
        return withUnsafeBytes(of: &ipv6) { Array($0) } == Array(repeating: 0, count: 15) + [1]
    }

    /// Whether credentials may be sent to this origin: over `https`, or over plain `http` to a loopback host only.
    var isSecureForCredentials: Bool { self.scheme == "https" || self.isLoopback }

    /// `scheme://host:port`, the port always written.
    var description: String { "\(self.scheme)://\(self.host.contains(":") ? "[\(self.host)]" : self.host):\(self.port)" }
}
