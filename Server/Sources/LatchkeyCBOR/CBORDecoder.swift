/// Reads one CBOR item (RFC 8949) from bytes an attacker may have written, within limits.
///
/// Refused, with a ``CBORError``: truncated input; indefinite lengths; reserved additional information; tags; simple
/// values other than false, true, null and undefined; duplicate map keys; invalid UTF-8; more than ``maximumDepth``
/// arrays and maps nested in one another; more than ``maximumItems`` items in all (map keys and values each count);
/// strings longer than ``maximumLength``. No length read from the input is allocated before it is known to fit the
/// input. Integers and lengths not in preferred (shortest) form are accepted.
public struct CBORDecoder: Sendable {
    /// The most arrays and maps that may be nested in one another.
    public let maximumDepth: Int
    /// The most items the input may hold in all.
    public let maximumItems: Int
    /// The longest byte or text string, in bytes.
    public let maximumLength: Int

    /// A decoder with these limits (a negative limit counts as 0).
    public init(maximumDepth: Int = 16, maximumItems: Int = 4096, maximumLength: Int = 65_536) {
        self.maximumDepth = max(0, maximumDepth)
        self.maximumItems = max(0, maximumItems)
        self.maximumLength = max(0, maximumLength)
    }

    /// The one item that is the whole of `bytes`; trailing bytes are an error.
    public func decode(_ bytes: [UInt8]) throws(CBORError) -> CBOR {
        let (item, consumed) = try self.decodePrefix(bytes[...])
        guard consumed == bytes.count else { throw CBORError(.trailingBytes, offset: consumed) }
        return item
    }

    /// The one item at the front of `bytes` and how many bytes it took; what follows is left to the caller.
    ///
    /// Error offsets count from the start of `bytes`.
    public func decodePrefix(_ bytes: ArraySlice<UInt8>) throws(CBORError) -> (CBOR, consumed: Int) {
        var reader = CBORReader(bytes: bytes, limits: self)
        let item = try reader.readItem(depth: 0)
        return (item, reader.consumed)
    }
}
