/// What the server offers, from its EHLO reply (RFC 5321 §4.1.1.1): one extension keyword and its parameters per line
/// after the first.
struct SMTPCapabilities: Sendable, Hashable {
    /// The extension keywords, uppercased.
    var extensions: Set<String> = []
    /// The mechanisms of the `AUTH` extension, uppercased (also from the obsolete `AUTH=` form).
    var authenticationMechanisms: Set<String> = []

    /// After HELO: no extensions at all.
    static let none = SMTPCapabilities()

    init() {}

    init(ehloReply reply: SMTPReply) {
        for line in reply.lines.dropFirst() {
            let words = line.split(whereSeparator: { $0 == " " || $0 == "=" }).map { $0.uppercased() }
            guard let keyword = words.first else { continue }
            self.extensions.insert(keyword)
            if keyword == "AUTH" { self.authenticationMechanisms.formUnion(words.dropFirst()) }
        }
    }

    var supportsStartTLS: Bool { self.extensions.contains("STARTTLS") }
}
