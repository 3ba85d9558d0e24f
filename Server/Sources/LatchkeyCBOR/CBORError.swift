/// Why some bytes are not one acceptable CBOR item, and where the decoder stopped.
///
/// Programs match ``code``; ``description`` is for people and never quotes the input.
public struct CBORError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What was wrong, as a value programs can match; new codes may be added.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Base: Sendable, Hashable {
            case truncated
            case indefiniteLength
            case reserved
            case unexpectedBreak
            case unsupportedTag
            case unsupportedSimpleValue
            case duplicateMapKey
            case invalidUTF8
            case tooDeep
            case tooLarge
            case trailingBytes
        }

        private let base: Base

        private init(_ base: Base) {
            self.base = base
        }

        /// The input ends inside an item.
        public static let truncated = Self(.truncated)
        /// An indefinite-length string, array or map (additional information 31).
        public static let indefiniteLength = Self(.indefiniteLength)
        /// Additional information 28 to 30, or 31 where no indefinite length can be.
        public static let reserved = Self(.reserved)
        /// A "break" stop code with no indefinite-length item to end.
        public static let unexpectedBreak = Self(.unexpectedBreak)
        /// A tag (major type 6): none is accepted.
        public static let unsupportedTag = Self(.unsupportedTag)
        /// A simple value other than false, true, null and undefined.
        public static let unsupportedSimpleValue = Self(.unsupportedSimpleValue)
        /// A map with the same key twice.
        public static let duplicateMapKey = Self(.duplicateMapKey)
        /// A text string that is not valid UTF-8.
        public static let invalidUTF8 = Self(.invalidUTF8)
        /// Arrays and maps nested deeper than the decoder's maximum depth.
        public static let tooDeep = Self(.tooDeep)
        /// More items than the decoder's maximum, or a string longer than its maximum length.
        public static let tooLarge = Self(.tooLarge)
        /// Bytes left over after the one item.
        public static let trailingBytes = Self(.trailingBytes)

        /// A sentence about the code.
        public var description: String {
            switch self.base {
            case .truncated: "the input ends inside an item"
            case .indefiniteLength: "indefinite lengths are not accepted"
            case .reserved: "reserved additional information"
            case .unexpectedBreak: "a break stop code outside an indefinite-length item"
            case .unsupportedTag: "tags are not accepted"
            case .unsupportedSimpleValue: "a simple value other than false, true, null or undefined"
            case .duplicateMapKey: "a map has the same key twice"
            case .invalidUTF8: "a text string is not valid UTF-8"
            case .tooDeep: "arrays and maps are nested too deeply"
            case .tooLarge: "too many items or too long a string"
            case .trailingBytes: "bytes follow the item"
            }
        }
    }

    /// What was wrong.
    public var code: Code
    /// Where, as a count of bytes from the start of the input: the start of the offending item or argument.
    public var offset: Int

    /// An error of `code` at `offset`.
    public init(_ code: Code, offset: Int) {
        self.code = code
        self.offset = offset
    }

    /// The code's sentence and the offset, never bytes of the input.
    public var description: String {
        "CBOR: \(self.code) (at byte \(self.offset))"
    }
}
