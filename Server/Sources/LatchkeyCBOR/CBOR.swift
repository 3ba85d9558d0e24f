/// One CBOR data item (RFC 8949), as far as WebAuthn and App Attest need: no tags, no indefinite lengths.
///
/// Maps keep their entries in the order they were read or given, so that encoding a decoded item gives back its
/// bytes when they were in preferred form.
public indirect enum CBOR: Sendable, Hashable {
    /// An unsigned integer (major type 0).
    case unsigned(UInt64)
    /// A negative integer (major type 1) whose value is `-1 - n`.
    case negative(UInt64)
    /// A byte string (major type 2).
    case bytes([UInt8])
    /// A text string (major type 3), valid UTF-8.
    case text(String)
    /// An array (major type 4).
    case array([CBOR])
    /// A map (major type 5): its entries in order, no key twice.
    case map([CBOR.Entry])
    /// The simple values false and true.
    case bool(Bool)
    /// The simple value null.
    case null
    /// The simple value undefined.
    case undefined
    /// A half-, single- or double-precision float, widened to a `Double`.
    case float(Double)

    /// One key and its value in a map.
    public struct Entry: Sendable, Hashable {
        /// The entry's key.
        public var key: CBOR
        /// The entry's value.
        public var value: CBOR

        /// An entry of `key` and `value`.
        public init(key: CBOR, value: CBOR) {
            self.key = key
            self.value = value
        }
    }
}
