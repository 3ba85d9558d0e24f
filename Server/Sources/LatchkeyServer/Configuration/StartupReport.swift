import Foundation
import Logging

extension LatchkeyConfiguration {
    /// What this configuration turns on, for the start-up log line: email, Apple, providers, storage, the console, the
    /// event sockets and where metrics are served.
    public var features: Logger.Metadata {
        [
            "email": .string(self.email.isEnabled ? "on" : "off"),
            "apple": .string(self.apple.isEnabled ? "on" : "off"),
            "google": .string(self.google.isEnabled ? "on" : "off"),
            "providers": .string(self.identityProviders.isEmpty ? "none" : self.identityProviders.map(\.name).joined(separator: ",")),
            "storage": .string(self.storage.isEnabled ? "on" : "off"),
            "console": .string(self.admin.enabled ? (self.admin.port.map { "port \($0)" } ?? "on") : "off"),
            "events": "on",
            "metrics": .string(self.metricsPort.map { "port \($0)" } ?? (self.metricsToken != nil ? "token" : "off")),
        ]
    }

    /// Warnings for the start: the public URL is a loopback address while something that puts it in front of people or
    /// other servers is on (mailed links, console links, the `iss` Apple and backends see).
    public var startupWarnings: [String] {
        // Extra roots let any key signed by them pass as attested: for tests only.
        let roots =
            self.appAttest.roots.isEmpty
            ? []
            : [
                "app-attest.roots is set: attestations chained to its \(self.appAttest.roots.count) extra root(s) are accepted beside Apple's; for tests only"
            ]
        return roots + self.loopbackWarnings
    }

    private var loopbackWarnings: [String] {
        guard Self.isLoopback(self.issuer) else { return [] }
        let users = [
            self.email.isEnabled ? "email (its links)" : nil, self.admin.enabled ? "the console (its links)" : nil,
            self.apple.isEnabled ? "Sign in with Apple" : nil,
        ].compactMap { $0 }
        guard !users.isEmpty else { return [] }
        return [
            "public-url is \(self.issuer), a loopback address, while \(users.joined(separator: ", ")) is on: links and the token issuer "
                + "point at this machine; set public-url (LATCHKEY_PUBLIC_URL) to the address people and backends use"
        ]
    }

    static func isLoopback(_ url: String) -> Bool {
        guard let host = URLComponents(string: url)?.host?.lowercased() else { return false }
        return host == "localhost" || host.hasPrefix("127.") || host == "::1" || host == "[::1]" || host == "0.0.0.0"
    }
}
