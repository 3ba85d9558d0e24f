/// A wire value a newer server may extend (a kind, a reason): any string decodes as itself instead of failing, so an
/// app built against this version keeps working when the server grows. Compare with the type's constants; a `switch`
/// over one needs a `default`.
///
/// Coded as the bare string (the standard library's coding of a `RawRepresentable` with a `String` raw value).
public protocol OpenWireValue: RawRepresentable, Hashable, Codable, Sendable, CustomStringConvertible where RawValue == String {
    /// The value with this wire string.
    init(rawValue: String)
}

extension OpenWireValue {
    /// The wire string.
    public var description: String { self.rawValue }
}
