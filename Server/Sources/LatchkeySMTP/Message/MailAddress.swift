/// A mailbox: an address with an optional display name, as in `"Latchkey" <no-reply@example.com>`.
///
/// The address itself is not parsed here (another component validates addr-specs); it is only refused when it could
/// break the SMTP envelope or the header section: line breaks, control characters, spaces, `<`, `>` or non-ASCII
/// characters (internationalised addresses need SMTPUTF8, which this client does not speak). ``validate(_:)`` is that
/// rule on its own, for whoever accepts addresses that will be mailed later.
public struct MailAddress: Sendable, Hashable, CustomStringConvertible {
    /// The address as given to `MAIL FROM` / `RCPT TO`, such as `user@example.com`.
    public let address: String
    /// The name shown beside the address; any Unicode text without control characters.
    public let displayName: String?

    /// Makes a mailbox; throws ``MailMessageError`` with ``MailMessageError/Code/invalidAddress`` or
    /// ``MailMessageError/Code/invalidHeader`` (display name) when a value could inject a header or command.
    public init(_ address: String, displayName: String? = nil) throws {
        try Self.validate(address)
        if let displayName {
            try HeaderText.validateUnstructured(displayName, field: "display name")
        }
        self.address = address
        self.displayName = displayName.flatMap { $0.isEmpty ? nil : $0 }
    }

    /// The domain after the last `@`, if there is one.
    var domain: String? {
        guard let at = self.address.lastIndex(of: "@") else { return nil }
        let domain = self.address[self.address.index(after: at)...]
        return domain.isEmpty ? nil : String(domain)
    }

    /// The mailbox as a header writes it: `"Name" <address>`, `=?utf-8?B?...?= <address>` or `<address>`.
    var headerValue: String {
        guard let displayName else { return "<\(self.address)>" }
        return "\(HeaderText.phrase(displayName)) <\(self.address)>"
    }

    public var description: String { self.headerValue }

    /// Throws ``MailMessageError`` with ``MailMessageError/Code/invalidAddress`` when this client would refuse to mail
    /// `address`: empty, or with anything but printable ASCII, or a space, `<` or `>` (even inside a quoted local part).
    public static func validate(_ address: String) throws(MailMessageError) {
        guard !address.isEmpty, address.unicodeScalars.allSatisfy(Self.isAllowedInAddress) else {
            throw MailMessageError(.invalidAddress, "an address must be non-empty printable ASCII without spaces, '<' or '>'")
        }
    }

    private static func isAllowedInAddress(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value > 0x20 && scalar.value < 0x7F && scalar != "<" && scalar != ">"
    }
}
